package dev.settle.testbroker;

import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.ClientBuilder;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.PulsarClientSharedResources;
import org.apache.pulsar.client.api.PulsarClientSharedResources.SharedResource;

/**
 * The Pulsar clients the tests make, on one timer for the JVM. A client left to itself starts a wheel timer of its own
 * that wakes every millisecond whether anything is due or not: with a client per test, four test classes at a time
 * and their helpers' clients, those threads were 7-8% of the runtime integration tests' JVM's CPU (18-22 s of
 * 256-286, issue 43; on this one timer, 2.6 s). The tests' clients schedule little (send and operation timeouts, a
 * consumer's redelivery, reconnection backoff), none of it measured to the millisecond: here it runs on one wheel of
 * 10 ms ticks, never closed. The runtime's own clients have a timer of their own ({@code SharedTimer}) and are not
 * made here.
 */
public final class TestClients {
    private static final PulsarClientSharedResources TIMER = PulsarClientSharedResources.builder()
            .resourceTypes(SharedResource.Timer)
            .configureTimer(timer -> timer.name("test-pulsar-timer").tickDuration(10, TimeUnit.MILLISECONDS))
            .build();

    private TestClients() {}

    /** {@code builder}'s client, on the shared timer. */
    public static PulsarClient build(ClientBuilder builder) throws PulsarClientException {
        return builder.sharedResources(TIMER).build();
    }
}
