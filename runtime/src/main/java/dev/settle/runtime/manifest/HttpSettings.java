package dev.settle.runtime.manifest;

/**
 * Where the runtime serves {@code /metrics}, {@code /livez} and {@code /readyz}.
 *
 * @param bindAddress the address to bind, {@code 0.0.0.0} by default
 * @param port the port; 0 picks a free one
 */
public record HttpSettings(String bindAddress, int port) {
    public static HttpSettings defaults() {
        return new HttpSettings(Defaults.HTTP_BIND_ADDRESS, Defaults.HTTP_PORT);
    }
}
