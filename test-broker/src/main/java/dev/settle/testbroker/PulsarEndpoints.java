package dev.settle.testbroker;

import java.util.Objects;

/**
 * Where a real Pulsar broker for a test listens.
 *
 * @param serviceUrl the binary protocol URL, {@code pulsar://host:port}
 * @param adminUrl the admin (web service) URL, {@code http://host:port}
 */
public record PulsarEndpoints(String serviceUrl, String adminUrl) {
    public PulsarEndpoints {
        Objects.requireNonNull(serviceUrl, "serviceUrl");
        Objects.requireNonNull(adminUrl, "adminUrl");
    }
}
