package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.next;
import static dev.settle.runtime.driver.DriverFixture.seen;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.settle.runtime.manifest.FailureBackoff;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Outcome;
import dev.settle.testbroker.Waits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/** Batches: a retry brings back only its own message when batch-index acknowledgement is on at both ends. */
@ExtendWith(DriverFixtures.class)
class BatchIT {
    private static final AtomicInteger SUBSCRIPTIONS = new AtomicInteger();

    /** Settlement's logger is the JVM's: the drivers of classes running beside this one log there too. */
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

    @BeforeEach
    void listen() {
        logged.start();
        ((Logger) LoggerFactory.getLogger(Settlement.class)).addAppender(logged);
    }

    @AfterEach
    void stopListening() {
        ((Logger) LoggerFactory.getLogger(Settlement.class)).detachAppender(logged);
    }

    /**
     * A Shared subscription named for this test alone (not DriverFixture's "sub"), so that the warnings it counts are
     * its own driver's.
     */
    private static SubscriptionSpec.Builder spec(String topic) {
        return SubscriptionSpec.builder("batch-" + SUBSCRIPTIONS.incrementAndGet(), List.of(topic))
                .type(SubscriptionKind.SHARED);
    }

    /** What was logged about {@code spec}'s subscription. */
    private List<String> loggedAbout(SubscriptionSpec spec) {
        return logged.list.stream()
                .map(ILoggingEvent::getFormattedMessage)
                .filter(message -> message.contains("subscription '" + spec.name() + "'"))
                .toList();
    }

    /** Publishes a0..a4 as one batch. */
    private static void sendOneBatch(DriverFixture pulsar, String topic) throws Exception {
        try (Producer<String> producer = pulsar.client
                .newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(true)
                .batchingMaxMessages(5)
                .batchingMaxPublishDelay(1, TimeUnit.SECONDS)
                .create()) {
            List<CompletableFuture<?>> sends = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                sends.add(producer.sendAsync("a" + i));
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        }
    }

    private static List<Seen> drain(BlockingQueue<Seen> seen, Duration quiet) throws InterruptedException {
        List<Seen> all = new ArrayList<>();
        for (Seen s = next(seen, Duration.ofSeconds(30)); s != null; s = next(seen, quiet)) {
            all.add(s);
        }
        return all;
    }

    @Test
    void withBatchIndexAckARetryBringsBackOnlyThatMessageAndOnlyItIsDeadLettered(DriverFixture pulsar)
            throws Exception {
        String topic = topic("batch-index");
        String deadLetters = topic + "-dlq";
        sendOneBatch(pulsar, topic);
        BlockingQueue<Seen> seen = seen();
        SubscriptionSpec spec = spec(topic)
                .batchIndexAck(true)
                .deadLetter(2, deadLetters)
                .concurrency(5)
                .build();
        pulsar.start(
                spec,
                seen,
                delivery -> {
                    if (!delivery.value().equals("a2")) {
                        return Outcome.ack();
                    }
                    // a2's first retry comes once its siblings' acknowledgements have reached the broker (they are
                    // handled meanwhile): once under a loaded full build an immediate one brought back a4 too, whose
                    // acknowledgement was still on its way (a retry is never delayed, docs/manifest.md).
                    if (delivery.attempt() == 1) {
                        try {
                            Waits.pause(Duration.ofMillis(500), "the siblings' acknowledgements reaching the broker");
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    return Outcome.retry();
                },
                new RecordingMetrics());

        List<Seen> all = drain(seen, Duration.ofSeconds(3));

        // Only a2 comes back: each acknowledged sibling is seen once. a2 itself is seen on attempts 1 and 2; once
        // in a full run it came a third time (at least once delivery), so its count is not pinned.
        for (String sibling : List.of("a0", "a1", "a3", "a4")) {
            assertThat(all)
                    .as("deliveries of %s among %s", sibling, all)
                    .filteredOn(s -> s.value().equals(sibling))
                    .hasSize(1);
        }
        assertThat(all)
                .filteredOn(s -> s.value().equals("a2"))
                .extracting(Seen::attempt)
                .contains(1, 2)
                .allMatch(attempt -> attempt <= 2);
        // With grouped acknowledgements the client dead-lettered all five here (its list is built before it drops
        // the siblings it has acknowledged but not yet sent); ConsumerSettings sends acks at once in this case.
        List<Message<String>> dead = pulsar.readAll(deadLetters, 1, Duration.ofSeconds(20));
        assertThat(dead).extracting(Message::getValue).containsExactly("a2");
        assertThat(loggedAbout(spec)).noneMatch(message -> message.contains("batch-index"));
    }

    @Test
    void withoutBatchIndexAckTheWholeBatchComesBackAndTheWarningIsLoggedOnce(DriverFixture pulsar) throws Exception {
        String topic = topic("batch-whole");
        sendOneBatch(pulsar, topic);
        BlockingQueue<Seen> seen = seen();
        SubscriptionSpec spec = spec(topic).build();
        pulsar.start(
                spec,
                seen,
                delivery -> delivery.value().equals("a2") && delivery.attempt() <= 2 ? Outcome.retry() : Outcome.ack(),
                new RecordingMetrics());

        List<Seen> all = drain(seen, Duration.ofSeconds(3));

        // Each retry brings back the whole batch, acknowledged siblings included (a sibling still waiting in the
        // receiver queue is dropped from it and comes back with the batch, so the total depends on timing).
        assertThat(all)
                .filteredOn(s -> s.value().equals("a0"))
                .extracting(Seen::attempt)
                .containsExactly(1, 2, 3);
        assertThat(all)
                .filteredOn(s -> s.value().equals("a2"))
                .extracting(Seen::attempt)
                .containsExactly(1, 2, 3);
        assertThat(all)
                .filteredOn(s -> s.value().equals("a4"))
                .extracting(Seen::attempt)
                .contains(3);
        assertThat(loggedAbout(spec))
                .filteredOn(message -> message.contains("without batch-index acknowledgement"))
                .hasSize(1);
    }

    /**
     * a0 always throws, with a 5 s failure backoff; a2, handled after a0 is held, asks for one retry. Returns the
     * time from a0's first copy to its second, in milliseconds.
     */
    private static long failureComesBackAfterMillis(DriverFixture pulsar, boolean batchIndexAck) throws Exception {
        String topic = topic(batchIndexAck ? "batch-backoff-index" : "batch-backoff-whole");
        sendOneBatch(pulsar, topic);
        BlockingQueue<Seen> seen = seen();
        SubscriptionSpec spec = spec(topic)
                .batchIndexAck(batchIndexAck)
                .failureBackoff(Optional.of(new FailureBackoff(Duration.ofSeconds(5), 1, Duration.ofSeconds(5))))
                .build();
        pulsar.start(
                spec,
                seen,
                delivery -> {
                    if (delivery.value().equals("a0")) {
                        throw new IllegalStateException("downstream is down");
                    }
                    return delivery.value().equals("a2") && delivery.attempt() == 1 ? Outcome.retry() : Outcome.ack();
                },
                new RecordingMetrics());

        List<Seen> failing = new ArrayList<>();
        for (Seen s = next(seen, Duration.ofSeconds(30));
                failing.size() < 2 && s != null;
                s = next(seen, Duration.ofSeconds(15))) {
            if (s.value().equals("a0")) {
                failing.add(s);
            }
        }
        assertThat(failing).as("copies of a0").hasSize(2);
        return Duration.ofNanos(failing.get(1).atNanos() - failing.get(0).atNanos())
                .toMillis();
    }

    @Test
    void aSiblingsRetryWhileAFailedMessageIsHeldBringsItBackBeforeItsBackoffWithOrWithoutBatchIndexAck(
            DriverFixture pulsar) throws Exception {
        // What docs/manifest.md says of failureBackoff with batched producers. a0 fails and is held for 5 s; then
        // its sibling a2 is retried. Without batch-index ack the broker sends the whole batch again; with it, the
        // entry's unacknowledged indexes, and a0 is one of them while it is held. Either way a0 is back at once.
        // (Measured: 16 ms without, 12 ms with. When the sibling's retry came before a0 was taken from the
        // receiver queue, the client dropped the queued copy and the backoff seemed to hold: a race, not a rule.)
        long whole = failureComesBackAfterMillis(pulsar, false);
        long indexed = failureComesBackAfterMillis(pulsar, true);
        System.out.printf(
                "a held message in a batch came back after %d ms without batch-index ack, %d ms with it, once a"
                        + " sibling was retried (failure backoff 5 s)%n",
                whole, indexed);

        assertThat(whole).as("without batch-index ack").isLessThan(2_500);
        assertThat(indexed).as("with batch-index ack").isLessThan(2_500);
    }
}
