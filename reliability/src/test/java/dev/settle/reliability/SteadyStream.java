package dev.settle.reliability;

import dev.settle.testbroker.Waits;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.PulsarClient;

/**
 * Sequences from 0 published at {@code rate} a second, in slices every 50 ms, keyed over {@code keys} keys: traffic
 * that goes on while runtimes come and go. It publishes at least {@code messages}, and past them until {@link
 * #endAfter} is called and its time has passed, so that a step a test planned for the middle of the stream (a
 * SIGTERM, a kill) still comes mid-stream when a loaded machine makes the steps before it slow: a fixed count at a
 * fixed rate once ran out before a rolling restart's SIGTERM, with a build of other modules beside it.
 */
final class SteadyStream implements AutoCloseable {
    /** Sequences {@code [0, published)} are stored; written by the publishing thread only. */
    private volatile long published;

    private final CompletableFuture<Void> publishing;
    /** {@code System.nanoTime()} after which the stream may end, once it has its {@code messages}. */
    private volatile long mayEndAt = Long.MAX_VALUE;

    private volatile boolean closed;

    private SteadyStream(PulsarClient client, String topic, long messages, int rate, int keys) {
        this.publishing = CompletableFuture.runAsync(() -> publish(client, topic, messages, rate, keys));
    }

    static SteadyStream start(PulsarClient client, String topic, long messages, int rate, int keys) {
        return new SteadyStream(client, topic, messages, rate, keys);
    }

    /** The stream goes on for {@code tail} more (at least), then ends once it has its {@code messages}. */
    void endAfter(Duration tail) {
        mayEndAt = System.nanoTime() + tail.toNanos();
    }

    /** How many sequences were published so far: {@code [0, published)}. */
    long published() {
        return published;
    }

    /** Waits for the stream's end ({@link #endAfter} first): how many sequences it published, {@code [0, n)}. */
    long join() {
        publishing.join();
        return published;
    }

    /** Ends the stream at its next slice, whatever it published: a test that failed on the way stops it too. */
    @Override
    public void close() {
        closed = true;
        publishing.exceptionally(failure -> null).join();
    }

    private void publish(PulsarClient client, String topic, long messages, int rate, int keys) {
        int slice = Math.max(1, rate / 20);
        long next = System.nanoTime();
        try {
            for (long from = 0; !closed && (from < messages || System.nanoTime() < mayEndAt); from += slice) {
                Workload.publish(client, topic, from, from + slice, keys);
                published = from + slice;
                next += Duration.ofMillis(50).toNanos();
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    Waits.pause(Duration.ofNanos(wait), "the publishing pace: a slice every 50 ms");
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("publishing failed", e);
        }
    }
}
