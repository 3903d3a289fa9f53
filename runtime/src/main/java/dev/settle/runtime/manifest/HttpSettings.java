package dev.settle.runtime.manifest;

/**
 * Where the runtime serves {@code /metrics}, {@code /livez} and {@code /readyz}.
 *
 * @param bindAddress the address to bind, {@code 0.0.0.0} by default (Kubernetes probes and scrapes come from
 *     outside the pod)
 * @param port the port, 8080 by default; 0 picks a free one
 */
public record HttpSettings(String bindAddress, int port) {
    public static final HttpSettings DEFAULT = new HttpSettings("0.0.0.0", 8080);
}
