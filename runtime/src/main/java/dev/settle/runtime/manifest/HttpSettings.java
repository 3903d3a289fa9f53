package dev.settle.runtime.manifest;

/**
 * Where the runtime serves {@code /metrics}, {@code /livez} and {@code /readyz}.
 *
 * @param bindAddress the address to bind, {@code 0.0.0.0} by default (Kubernetes probes and scrapes come from
 *     outside the pod)
 * @param port the port, 8080 by default; 0 picks a free one
 * @param probeDetail whether {@code /livez} and {@code /readyz} bodies name what fails (true by default); false
 *     answers a bare "live", "ready" or "not ready" to whoever can reach the port, and the detail goes to the log
 */
public record HttpSettings(String bindAddress, int port, boolean probeDetail) {
    public static final HttpSettings DEFAULT = new HttpSettings("0.0.0.0", 8080);

    /** With the detail in probe bodies. */
    public HttpSettings(String bindAddress, int port) {
        this(bindAddress, port, true);
    }
}
