package dev.settle.benchmarks;

import dev.settle.benchmarks.handlers.Marker;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;

/**
 * The baseline for a function with an output: the pipelined loop a user would write by hand. {@code receive()},
 * {@code sendAsync} of the value to the output (the producer at the client's defaults: batching on, 1 ms), and
 * {@code acknowledgeAsync} once that send completes; at most 1000 sends pending, as Settle's default
 * {@code maxPendingOutputs}. Same consumer settings as {@link LoopConsumer}. Prints {@code first} at the first
 * receive, {@code warm} at the receive after the warm-up, and {@code last} when the last input is acknowledged.
 *
 * <p>Arguments: service URL, input topic, subscription, output topic, message count, and the messages before the
 * {@code warm} marker (0 when absent).
 */
final class PipelinedLoop {
    private static final int MAX_PENDING = 1000;

    private PipelinedLoop() {}

    public static void main(String[] args) throws Exception {
        String serviceUrl = args[0];
        String topic = args[1];
        String subscription = args[2];
        String output = args[3];
        long count = Long.parseLong(args[4]);
        long warmUp = args.length > 5 ? Long.parseLong(args[5]) : 0;
        try (PulsarClient client = PulsarClient.builder().serviceUrl(serviceUrl).build();
                Producer<byte[]> producer = client.newProducer(Schema.BYTES)
                        .topic(output)
                        .blockIfQueueFull(true)
                        .create();
                Consumer<byte[]> consumer = LoopConsumer.subscribe(client, topic, subscription)) {
            Semaphore pending = new Semaphore(MAX_PENDING);
            CountDownLatch done = new CountDownLatch(1);
            AtomicLong acked = new AtomicLong();
            for (long i = 0; i < count; i++) {
                pending.acquire();
                Message<byte[]> message = consumer.receive();
                if (i == 0) {
                    Marker.now("first");
                }
                if (i == warmUp) {
                    Marker.now("warm");
                }
                producer.sendAsync(message.getValue()).whenComplete((id, error) -> {
                    pending.release();
                    if (error != null) {
                        consumer.negativeAcknowledge(message);
                        return;
                    }
                    consumer.acknowledgeAsync(message);
                    if (acked.incrementAndGet() == count) {
                        Marker.now("last");
                        done.countDown();
                    }
                });
            }
            done.await();
        }
    }
}
