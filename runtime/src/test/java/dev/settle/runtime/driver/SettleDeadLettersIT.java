package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.deadletter.DeadLetterProducer;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Handler;
import dev.settle.sdk.Outcome;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Settle writes the dead letter of a failed last attempt, with its cause, on a real broker (docs/dead-letters.md). */
@ExtendWith(DriverFixtures.class)
class SettleDeadLettersIT {
    private static final Duration WITHIN = Duration.ofSeconds(30);

    /** Runs {@code handler} with maxAttempts 3 (no failure backoff), sends "poison", returns its one dead letter. */
    private static <T> Message<?> deadLetterOf(
            DriverFixture pulsar, SubscriptionSpec.Builder spec, Handler<T> handler, Class<T> type, String topic)
            throws Exception {
        String deadLetters = topic + "-dlq";
        SubscriptionSpec built =
                spec.deadLetter(3, deadLetters).failureBackoff(Optional.empty()).build();
        SubscriptionDriver driver = pulsar.start(built, handler, type, new RecordingMetrics());
        // Subscribed first: a producer with no schema that creates the topic first makes the broker refuse a JSON
        // consumer on it (an active topic with an empty schema), as in the parallel build once.
        await().atMost(WITHIN).until(driver::isConnected);
        // Raw bytes, as an upstream producer with no schema sends them: a JSON consumer reads them all the same.
        try (Producer<byte[]> producer = pulsar.client
                .newProducer(Schema.BYTES)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            producer.newMessage()
                    .value("poison".getBytes(StandardCharsets.UTF_8))
                    .key("key-1")
                    .property("origin", "test")
                    .send();
        }

        // Read whatever schema the letter was written with (the consumer's, or none yet): a STRING reader races it.
        List<? extends Message<?>> dead = pulsar.readAll(deadLetters, 1, WITHIN, Schema.AUTO_CONSUME());
        assertThat(dead).hasSize(1);
        assertThat(pulsar.admin.topics().getSubscriptions(deadLetters)).contains("sub-dlq");
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
        assertThat(new String(dead.get(0).getData(), StandardCharsets.UTF_8)).isEqualTo("poison");
        assertThat(dead.get(0).getKey()).isEqualTo("key-1");
        assertThat(dead.get(0).getProperties())
                .containsEntry("origin", "test")
                .containsEntry("REAL_TOPIC", topic)
                .containsEntry("REAL_SUBSCRIPTION", "sub")
                .containsKey("ORIGIN_MESSAGE_ID");
        return dead.get(0);
    }

    @Test
    void aHandlerThatThrowsIsDeadLetteredWithItsClassMessageStageAttemptsAndTimes(DriverFixture pulsar)
            throws Exception {
        String topic = topic("settle-dlq-handler");
        Instant before = Instant.now();
        Handler<String> boom = delivery -> {
            throw new IllegalStateException("boom");
        };

        Message<?> dead = deadLetterOf(pulsar, spec(topic, SubscriptionKind.SHARED), boom, String.class, topic);

        Map<String, String> properties = dead.getProperties();
        assertThat(properties)
                .containsEntry("settle.stage", "handler")
                .containsEntry("settle.exception.class", "java.lang.IllegalStateException")
                .containsEntry("settle.exception.message", "boom")
                .containsEntry("settle.attempts", "3")
                .containsEntry("settle.subscription", "sub")
                .containsKeys("settle.instance", "settle.code");
        assertThat(properties.get("settle.exception.stacktrace")).startsWith("java.lang.IllegalStateException: boom");
        Instant first = Instant.parse(properties.get("settle.first.attempt.time"));
        Instant last = Instant.parse(properties.get("settle.last.attempt.time"));
        assertThat(first).isAfterOrEqualTo(before.minusSeconds(1)).isBeforeOrEqualTo(last);
        assertThat(last).isBeforeOrEqualTo(Instant.now());
    }

    /** A handler's exception that cannot say what it is: its message, and so its text, throws. */
    static final class UnprintableException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        @Override
        public String getMessage() {
            throw new IllegalStateException("getMessage() of a handler's exception");
        }
    }

    @Test
    void anExceptionWhoseMessageThrowsIsRetriedAndDeadLetteredInline(DriverFixture pulsar) throws Exception {
        anExceptionWhoseMessageThrowsIsRetriedAndDeadLettered(pulsar, 1);
    }

    @Test
    void anExceptionWhoseMessageThrowsIsRetriedAndDeadLetteredOnThePool(DriverFixture pulsar) throws Exception {
        anExceptionWhoseMessageThrowsIsRetriedAndDeadLettered(pulsar, 4);
    }

    /**
     * Issue 41: it escaped the failure log, unsettled; inline the receive loop died (a crash loop the cap never
     * ended), on the pool the thread died and its replacement kept every permit it took.
     */
    private static void anExceptionWhoseMessageThrowsIsRetriedAndDeadLettered(DriverFixture pulsar, int concurrency)
            throws Exception {
        String topic = topic("settle-dlq-unprintable");
        Handler<String> unprintable = delivery -> {
            throw new UnprintableException();
        };

        Message<?> dead = deadLetterOf(
                pulsar,
                spec(topic, SubscriptionKind.SHARED).concurrency(concurrency),
                unprintable,
                String.class,
                topic);

        assertThat(dead.getProperties())
                .containsEntry("settle.stage", "handler")
                .containsEntry("settle.exception.class", UnprintableException.class.getName())
                .containsEntry("settle.attempts", "3");
        assertThat(dead.getProperties().get("settle.exception.message"))
                .contains("getMessage() threw java.lang.IllegalStateException");
        assertThat(dead.getProperties().get("settle.exception.stacktrace"))
                .contains(UnprintableException.class.getName());
    }

    /**
     * The letter of a String handler's message (read with AUTO_CONSUME) needs the schema of the message's version,
     * which the client fetches from the broker and waits for. Built on the client's network thread (where the dead
     * letter producer's creation completes), that wait blocked the thread that would read the answer: every
     * connection of that thread stood still for the 30 s operation timeout (lookups and subscribes timed out, the
     * broker dropped the connection for missed keep-alives) and the letter was not stored. With one network thread
     * that happened every time; with two, under the parallel IT run.
     */
    @Test
    void aLetterIsStoredAtOnceWhenTheClientHasOneNetworkThread(DriverFixture pulsar) throws Exception {
        String topic = topic("settle-dlq-one-thread");
        String deadLetters = topic + "-dlq";
        SubscriptionSpec built = spec(topic, SubscriptionKind.SHARED)
                .deadLetter(3, deadLetters)
                .failureBackoff(Optional.empty())
                .build();
        Handler<String> boom = delivery -> {
            throw new IllegalStateException("boom");
        };
        // Subscribed before the topic has a schema: the message's schema version is not known to the consumer yet.
        SubscriptionDriver driver = pulsar.start(
                pulsar.clientWithOneNetworkThread(),
                built,
                SdkHandlerPort.of(boom, String.class, built),
                new RecordingMetrics());
        await().atMost(WITHIN).until(driver::isConnected);
        pulsar.send(topic, "poison", "key-1", Map.of());

        // Stored well inside the operation timeout: a letter that waited for it would come later, and without a
        // cause. Read once stored: a STRING reader subscribing while the letter's producer has the topic open with
        // no schema yet is refused by the broker.
        await().atMost(Duration.ofSeconds(15)).until(() -> stored(pulsar, deadLetters) == 1);
        // Read whatever schema the letter was written with (the consumer's, or none yet): a STRING reader races it.
        List<? extends Message<?>> dead = pulsar.readAll(deadLetters, 1, WITHIN, Schema.AUTO_CONSUME());

        assertThat(dead)
                .singleElement()
                .satisfies(letter -> assertThat(letter.getProperties())
                        .containsEntry("settle.stage", "handler")
                        .containsEntry("settle.exception.message", "boom"));
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
    }

    private static long stored(DriverFixture pulsar, String topic) throws Exception {
        try {
            return pulsar.admin.topics().getStats(topic).getMsgInCounter();
        } catch (PulsarAdminException.NotFoundException notYet) {
            return 0;
        }
    }

    @Test
    void anUndecodablePayloadSaysDecode(DriverFixture pulsar) throws Exception {
        record Order(String id, int quantity) {}
        String topic = topic("settle-dlq-decode");
        Handler<Order> handler = delivery -> Outcome.ack();

        // "poison" is no JSON: it never reaches the handler.
        Message<?> dead = deadLetterOf(pulsar, spec(topic, SubscriptionKind.SHARED), handler, Order.class, topic);

        assertThat(dead.getProperties())
                .containsEntry("settle.stage", "decode")
                .containsEntry("settle.exception.class", PayloadDecodeException.class.getName())
                .containsEntry("settle.attempts", "3");
    }

    /**
     * The dead-letter topic holds another schema (a reader subscribed to it first with its own): the letter goes
     * through the producer of the topic's schema, which must not check the bytes against it either.
     */
    @Test
    void anUndecodablePayloadIsStoredUnderTheDeadLetterTopicsOwnSchema(DriverFixture pulsar) throws Exception {
        record Order(String id, int quantity) {}
        record Audit(String who) {}
        String topic = topic("settle-dlq-decode-other-schema");
        try (Producer<Audit> other = pulsar.client
                .newProducer(Schema.JSON(Audit.class))
                .topic(topic + "-dlq")
                .create()) {
            // Registers Audit's schema on the dead-letter topic, which refuses Order's.
        }
        Handler<Order> handler = delivery -> Outcome.ack();

        Message<?> dead = deadLetterOf(pulsar, spec(topic, SubscriptionKind.SHARED), handler, Order.class, topic);

        assertThat(dead.getProperties())
                .containsEntry("settle.stage", "decode")
                .containsEntry("settle.exception.class", PayloadDecodeException.class.getName());
    }

    @Test
    void anOutputNotStoredSaysOutput(DriverFixture pulsar) throws Exception {
        String topic = topic("settle-dlq-output");
        String deadLetters = topic + "-dlq";
        SubscriptionSpec built = spec(topic, SubscriptionKind.SHARED)
                .deadLetter(3, deadLetters)
                .failureBackoff(Optional.empty())
                .build();
        HandlerPort refused = new HandlerPort() {
            @Override
            public Schema<?> schema() {
                return Schema.STRING;
            }

            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                return CompletableFuture.failedFuture(new OutputNotDurableException(
                        "output to persistent://public/default/out not stored", new IllegalStateException("fenced")));
            }
        };
        pulsar.start(built, refused, new RecordingMetrics());
        pulsar.send(topic, "poison", null, Map.of());

        // Read whatever schema the letter was written with (the consumer's, or none yet): a STRING reader races it.
        List<? extends Message<?>> dead = pulsar.readAll(deadLetters, 1, WITHIN, Schema.AUTO_CONSUME());

        assertThat(dead)
                .singleElement()
                .satisfies(letter -> assertThat(letter.getProperties())
                        .containsEntry("settle.stage", "output")
                        .containsEntry("settle.exception.class", OutputNotDurableException.class.getName()));
    }

    /**
     * A driver whose letters are stored, then held in flight until {@code letGo} completes; returned once a poison
     * message sent to {@code topic} failed and its letter is being written.
     */
    private static SubscriptionDriver heldLetters(DriverFixture pulsar, String topic, CompletableFuture<Void> letGo)
            throws Exception {
        CountDownLatch writing = new CountDownLatch(1);
        SubscriptionSpec built = spec(topic, SubscriptionKind.SHARED)
                .deadLetter(2, topic + "-dlq")
                .failureBackoff(Optional.empty())
                .build();
        Handler<String> boom = delivery -> {
            throw new IllegalStateException("boom");
        };
        UnaryOperator<DeadLetterWriter<Message<?>>> held = real -> (work, properties) -> {
            writing.countDown();
            return real.write(work, properties).thenCompose(stored -> letGo);
        };
        HandlerPort port = SdkHandlerPort.of(boom, String.class, built);
        SubscriptionDriver driver = SubscriptionDriver.start(
                pulsar.client,
                built,
                port,
                port.schema(),
                pulsar.time,
                new RecordingMetrics(),
                DriverWiring.NONE.withLetters(held));
        await().atMost(WITHIN).until(driver::isConnected);
        pulsar.send(topic, "poison", null, Map.of());
        assertThat(writing.await(30, TimeUnit.SECONDS)).isTrue();
        return driver;
    }

    @Test
    void aStopWaitsWithinItsGraceForALetterStillBeingWritten(DriverFixture pulsar) throws Exception {
        String topic = topic("settle-dlq-stop-waits");
        CompletableFuture<Void> letGo = new CompletableFuture<>();
        SubscriptionDriver driver = heldLetters(pulsar, topic, letGo);

        // The letter is let go 1 s into the stop, well inside its 20 s grace.
        CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS).execute(() -> letGo.complete(null));
        long started = System.nanoTime();
        driver.stop(Duration.ofSeconds(20));
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(letGo).isDone();
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(900)).isLessThan(Duration.ofSeconds(20));
        // Acknowledged before the consumer closed: nothing comes back.
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
    }

    @Test
    void aLetterStillBeingWrittenAfterTheGraceLeavesItsOriginalUnacknowledged(DriverFixture pulsar) throws Exception {
        String topic = topic("settle-dlq-stop-grace");
        CompletableFuture<Void> letGo = new CompletableFuture<>();
        SubscriptionDriver driver = heldLetters(pulsar, topic, letGo);

        long started = System.nanoTime();
        driver.stop(Duration.ofSeconds(1));
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        letGo.complete(null);

        assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(900)).isLessThan(Duration.ofSeconds(10));
        // Its acknowledgement came after the consumer closed: the original stays, to come back.
        await().during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(5))
                .until(() -> pulsar.backlog(topic, "sub") == 1);
    }

    /**
     * Closing the writer while its producer is still being created (the first letter's) closes that producer once it
     * is made: closing only the finished ones left it connected for as long as the client lived.
     */
    @Test
    void closingWaitsForADeadLetterProducerStillBeingCreated(DriverFixture pulsar) throws Exception {
        String topic = topic("settle-dlq-close");
        String deadLetters = topic + "-dlq";
        Message<String> original;
        try (Consumer<String> consumer = pulsar.client
                .newConsumer(Schema.STRING)
                .topic(topic)
                .subscriptionName("sub")
                .subscribe()) {
            pulsar.send(topic, "poison", null, Map.of());
            original = consumer.receive(30, TimeUnit.SECONDS);
        }
        assertThat(original).isNotNull();
        DeadLetterProducer letters = new DeadLetterProducer(
                pulsar.client,
                "sub",
                new DeadLetter(2, deadLetters, Optional.of("sub-dlq")),
                Schema.STRING,
                false,
                pulsar.time);

        // The first letter starts creating the producer; the close comes before it can be made.
        letters.write(original, Optional.empty(), Map.of("settle.stage", "handler"));
        letters.close(Duration.ofSeconds(10));

        await().during(Duration.ofSeconds(2))
                .atMost(Duration.ofSeconds(5))
                .until(() -> publishers(pulsar, deadLetters) == 0);
    }

    private static int publishers(DriverFixture pulsar, String topic) throws Exception {
        try {
            return pulsar.admin.topics().getStats(topic).getPublishers().size();
        } catch (PulsarAdminException.NotFoundException notYet) {
            return 0;
        }
    }

    @Test
    void anAckTimeoutIsDeadLetteredByTheClientWithNoCause(DriverFixture pulsar) throws Exception {
        String topic = topic("settle-dlq-ack-timeout");
        Handler<String> silent = delivery -> null;

        Message<?> dead = deadLetterOf(
                pulsar,
                spec(topic, SubscriptionKind.SHARED).ackTimeout(Duration.ofSeconds(1)),
                silent,
                String.class,
                topic);

        assertThat(dead.getProperties().keySet()).noneMatch(name -> name.startsWith("settle."));
    }
}
