package dev.settle.benchmarks;

import dev.settle.benchmarks.handlers.Payload;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;

/** Publishes a topic's messages before its consumer starts: 100-byte payloads numbered from 0. */
final class Backlog {
    private Backlog() {}

    /**
     * @param batching whether the producer batches (its defaults: up to 1000 messages or 1 ms per batch); unbatched,
     *     every message is an entry of its own and the broker does per-message work
     */
    static void produce(PulsarClient client, String topic, int count, boolean batching) throws PulsarClientException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (Producer<byte[]> producer = client.newProducer(Schema.BYTES)
                .topic(topic)
                .enableBatching(batching)
                .blockIfQueueFull(true)
                .sendTimeout(0, TimeUnit.SECONDS)
                .create()) {
            CompletableFuture<?> last = CompletableFuture.completedFuture(null);
            for (int i = 0; i < count; i++) {
                last = producer.sendAsync(Payload.of(i)).whenComplete((id, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            producer.flush();
            last.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("publishing the backlog of " + topic + " failed", failure.get());
        }
    }
}
