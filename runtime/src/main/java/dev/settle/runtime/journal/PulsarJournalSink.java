package dev.settle.runtime.journal;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The journal topic behind a {@link JournalWriter}: one producer, made in the background and made again, after a
 * growing pause, whenever it cannot be made or a send fails (the topic deleted, the client not allowed to produce,
 * the broker gone). Until it exists every write answers at once that nothing was stored: the writer counts the loss
 * and no settlement ever waits for it.
 */
final class PulsarJournalSink implements JournalSink {
    private static final Logger log = LoggerFactory.getLogger(PulsarJournalSink.class);
    private static final Duration FIRST_PAUSE = Duration.ofSeconds(1);
    private static final Duration LONGEST_PAUSE = Duration.ofSeconds(60);

    private static final int MAX_PENDING = 300;

    private final PulsarClient client;
    private final String topic;
    private final Time time;
    /** Null while there is none: being made, or waiting to be made again. */
    private volatile Producer<byte[]> producer;

    private volatile boolean connecting;
    /** Until the first producer is made or fails: the writer keeps its records meanwhile ({@link #starting()}). */
    private volatile boolean starting = true;

    private volatile boolean closed;
    private volatile Duration pause = FIRST_PAUSE;
    /** Whether the last attempt failed, so a topic that stays unwritable is logged once, not every minute. */
    private volatile boolean failing;

    PulsarJournalSink(PulsarClient client, String topic, Time time) {
        this.client = client;
        this.topic = topic;
        this.time = time;
        connect();
    }

    private synchronized void connect() {
        if (closed || connecting || producer != null) {
            return;
        }
        connecting = true;
        client.newProducer(Schema.BYTES)
                .topic(topic)
                // Each message is already a flush's records (JournalBatch): the producer's batching would only add
                // its delay.
                .enableBatching(false)
                // A full producer fails the send at once: the journal never makes anything wait.
                .blockIfQueueFull(false)
                // A flush is a message or a few (JournalBatch.MAX_BODY_BYTES): 300 waiting is 30 s of quiet flushes
                // on a broker that does not answer. Past that a flush's records are lost, counted, not held unbounded.
                .maxPendingMessages(MAX_PENDING)
                .sendTimeout(30, TimeUnit.SECONDS)
                .createAsync()
                .whenComplete((made, error) -> {
                    synchronized (this) {
                        connecting = false;
                        starting = false;
                        if (error == null && closed) {
                            made.closeAsync();
                        } else if (error == null) {
                            producer = made;
                            pause = FIRST_PAUSE;
                            if (failing) {
                                log.info("journal topic {}: writing again", topic);
                            }
                            failing = false;
                        } else {
                            retryLater(error);
                        }
                    }
                });
    }

    /** Under this object's monitor. */
    private void retryLater(Throwable error) {
        if (closed) {
            return;
        }
        if (!failing) {
            log.warn(
                    "journal topic {}: cannot write to it ({}); its records are dropped and counted, settlement goes"
                            + " on, and the producer is tried again in the background. Check that the topic's"
                            + " namespace exists and that this runtime's role may produce to it (docs/trace.md)",
                    topic,
                    PulsarClientException.unwrap(error).toString());
        }
        failing = true;
        Duration wait = pause;
        pause = wait.multipliedBy(2).compareTo(LONGEST_PAUSE) > 0 ? LONGEST_PAUSE : wait.multipliedBy(2);
        try {
            time.schedule(wait, this::connect);
        } catch (RejectedExecutionException timerClosed) {
            // The runtime is stopping.
        }
    }

    @Override
    public boolean starting() {
        return starting;
    }

    @Override
    public CompletionStage<Integer> write(List<JournalBatch> batches) {
        Producer<byte[]> current = producer;
        if (current == null) {
            return CompletableFuture.completedFuture(
                    batches.stream().mapToInt(JournalBatch::records).sum());
        }
        AtomicInteger lost = new AtomicInteger();
        CompletableFuture<?>[] sends = new CompletableFuture<?>[batches.size()];
        for (int i = 0; i < sends.length; i++) {
            JournalBatch batch = batches.get(i);
            sends[i] = current.newMessage()
                    .eventTime(batch.firstAt())
                    .properties(JournalBatch.properties())
                    .value(batch.body())
                    .sendAsync()
                    .handle((id, error) -> {
                        if (error != null) {
                            lost.addAndGet(batch.records());
                            Throwable cause = PulsarClientException.unwrap(error);
                            if (!(cause instanceof PulsarClientException.ProducerQueueIsFullError
                                    || cause instanceof PulsarClientException.MemoryBufferIsFullError)) {
                                broken(current, error);
                            }
                        }
                        return null;
                    });
        }
        return CompletableFuture.allOf(sends).thenApply(none -> lost.get());
    }

    /** A send failed for another reason than a full queue: this producer is let go of and another one made. */
    private synchronized void broken(Producer<byte[]> failed, Throwable error) {
        if (producer != failed) {
            return;
        }
        producer = null;
        failed.closeAsync();
        retryLater(error);
    }

    @Override
    public void close() {
        Producer<byte[]> current;
        synchronized (this) {
            closed = true;
            current = producer;
            producer = null;
        }
        if (current != null) {
            try {
                // Flushes the last batch; bounded, so a broker that is gone cannot hold the stop.
                current.flushAsync().get(5, TimeUnit.SECONDS);
            } catch (Exception notFlushed) {
                log.debug("journal topic {}: last records not flushed at close: {}", topic, notFlushed.toString());
            }
            current.closeAsync();
        }
    }
}
