package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.FailureBackoff;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.ManualTime;
import dev.settle.sdk.Outcome;
import java.lang.ref.WeakReference;
import java.lang.reflect.Constructor;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The outcome → consumer-call mapping, on a manual clock: nothing here sleeps. */
class SettlementTest {
    private static final Failure BOOM = new Failure(Failure.Stage.HANDLER, new IllegalStateException("boom"));
    private final RecordingConsumerCalls consumer = new RecordingConsumerCalls();
    private final List<String> calls = consumer.calls;
    private final ManualTime time = new ManualTime();
    private final RecordingMetrics metrics = new RecordingMetrics();

    private Settlement<String> settlement(SubscriptionSpec.Builder spec) {
        SubscriptionSpec built = spec.build();
        return settlement(built, DeadLettering.byClient(built, time), Settlement.Outage.none());
    }

    /** A settlement with {@code letters} and {@code outage}, every wait held in memory. */
    private Settlement<String> settlement(
            SubscriptionSpec spec, DeadLettering<String> letters, Settlement.Outage<String> outage) {
        return new Settlement<>(spec, consumer, letters, time, metrics, outage, DelayCopies.off());
    }

    private static SubscriptionSpec.Builder shared() {
        return SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .type(SubscriptionKind.SHARED);
    }

    /** Message {@code m} on delivery {@code attempt}, received now. */
    private UnitOfWork<String> received(int attempt) {
        return new UnitOfWork<>("m", "id-1", attempt, false, time.nanoTime());
    }

    private static Duration millis(long value) {
        return Duration.ofMillis(value);
    }

    @Test
    void everyPermittedOutcomeHasItsOwnSettlement() throws Exception {
        Set<Settled> seen = EnumSet.noneOf(Settled.class);
        for (Class<?> type : Outcome.class.getPermittedSubclasses()) {
            Outcome outcome = instanceOf(type);
            Settled how = Settlement.classify(outcome);
            assertThat(seen.add(how))
                    .as("%s maps to %s, already taken", type.getSimpleName(), how)
                    .isTrue();
        }
        assertThat(seen).containsExactlyInAnyOrder(Settled.ACK, Settled.RETRY, Settled.RETRY_AFTER, Settled.DROP);
        assertThat(Settlement.classify(null)).isEqualTo(Settled.NONE);
    }

    @Test
    void eachOutcomeIsExactlyOneCallOnTheConsumer() {
        Settlement<String> settlement = settlement(shared().failureBackoff(Optional.empty()));

        assertThat(settlement.apply(received(1), Outcome.ack())).isEqualTo(Settled.ACK);
        assertThat(settlement.apply(received(1), Outcome.drop())).isEqualTo(Settled.DROP);
        assertThat(settlement.apply(received(1), Outcome.retry())).isEqualTo(Settled.RETRY);
        assertThat(settlement.apply(received(1), null)).isEqualTo(Settled.NONE);
        assertThat(settlement.failed(received(1), BOOM)).isEqualTo(Settled.ERROR);

        assertThat(calls)
                .containsExactly("acknowledge m", "acknowledge m", "negativeAcknowledge m", "negativeAcknowledge m");
    }

    @Test
    void retryAfterHoldsTheMessageThenNegativelyAcknowledgesIt() {
        Settlement<String> settlement = settlement(shared());

        Settled how = settlement.apply(received(1), Outcome.retryAfter(Duration.ofSeconds(2)));

        assertThat(how).isEqualTo(Settled.RETRY_AFTER);
        assertThat(metrics.held.get()).isEqualTo(1);
        assertThat(metrics.held.get()).isEqualTo(1);
        time.advance(millis(1999));
        assertThat(calls).isEmpty();
        time.advance(millis(1));
        assertThat(calls).containsExactly("negativeAcknowledge m");
        assertThat(metrics.held.get()).isZero();
        assertThat(metrics.held.get()).isZero();
    }

    @Test
    void retryAfterNotShorterThanTheAckTimeoutIsRefusedAndRetriedAtOnce() {
        Settlement<String> settlement = settlement(shared().ackTimeout(Duration.ofSeconds(2)));

        Settled how = settlement.apply(received(1), Outcome.retryAfter(Duration.ofSeconds(2)));

        assertThat(how).isEqualTo(Settled.REFUSED);
        assertThat(calls).containsExactly("negativeAcknowledge m");
        assertThat(metrics.held.get()).isZero();
    }

    @Test
    void retryAfterLongerThanWhatIsLeftOfTheAckTimeoutIsRefused() {
        Settlement<String> settlement = settlement(shared().ackTimeout(Duration.ofSeconds(2)));
        UnitOfWork<String> received = received(1);
        time.advance(millis(1500));

        assertThat(settlement.apply(received, Outcome.retryAfter(Duration.ofSeconds(1))))
                .isEqualTo(Settled.REFUSED);
        assertThat(settlement.apply(received, Outcome.retryAfter(millis(499)))).isEqualTo(Settled.RETRY_AFTER);
    }

    @Test
    void withoutAnAckTimeoutAnyPositiveDelayIsHeld() {
        Settlement<String> settlement = settlement(shared());

        Settled how = settlement.apply(received(1), Outcome.retryAfter(Duration.ofDays(1)));

        assertThat(how).isEqualTo(Settled.RETRY_AFTER);
        assertThat(metrics.held.get()).isEqualTo(1);
        time.advance(Duration.ofDays(1));
        assertThat(calls).containsExactly("negativeAcknowledge m");
    }

    @Test
    void aDelayTooLongToCountInNanosecondsIsHeldOnceWithoutOverflow() {
        Settlement<String> settlement = settlement(shared());

        Settled how = settlement.apply(received(1), Outcome.retryAfter(Duration.ofSeconds(Long.MAX_VALUE)));

        assertThat(how).isEqualTo(Settled.RETRY_AFTER);
        assertThat(metrics.held.get()).isEqualTo(1);
        assertThat(metrics.held.get()).isEqualTo(1);
        time.advance(Duration.ofDays(365L * 200));
        assertThat(calls).isEmpty();
        assertThat(settlement.abandonHeld()).isEqualTo(1);
        assertThat(metrics.held.get()).isZero();
    }

    @Test
    void abandoningHeldRetriesLeavesTheMessagesUnacknowledged() {
        Settlement<String> settlement = settlement(shared());
        settlement.apply(received(1), Outcome.retryAfter(Duration.ofSeconds(1)));

        assertThat(settlement.abandonHeld()).isEqualTo(1);
        // Past the wait: the timer fires and must do nothing.
        time.advance(Duration.ofSeconds(2));

        assertThat(calls).isEmpty();
        assertThat(metrics.held.get()).isZero();
    }

    @Test
    void aFailureIsHeldForABackoffThatGrowsWithTheAttempt() {
        Settlement<String> settlement = settlement(shared());
        List<Long> waits = new ArrayList<>();

        for (int attempt = 1; attempt <= 4; attempt++) {
            assertThat(settlement.failed(received(attempt), BOOM)).isEqualTo(Settled.ERROR);
            assertThat(metrics.held.get()).isEqualTo(1);
            long waited = 0;
            while (calls.isEmpty()) {
                time.advance(millis(1));
                waited++;
            }
            waits.add(waited);
            calls.clear();
        }

        assertThat(waits).containsExactly(100L, 200L, 400L, 800L);
        assertThat(metrics.held.get()).isZero();
    }

    @Test
    void theBackoffStopsGrowingAtItsMaximum() {
        FailureBackoff backoff = new FailureBackoff(millis(100), 3, Duration.ofSeconds(1));

        assertThat(backoff.delayAfter(1)).isEqualTo(millis(100));
        assertThat(backoff.delayAfter(3)).isEqualTo(millis(900));
        assertThat(backoff.delayAfter(4)).isEqualTo(Duration.ofSeconds(1));
        assertThat(backoff.delayAfter(10_000)).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void aFailureOnTheLastAttemptGoesToTheDeadLettersAtOnce() {
        Settlement<String> settlement = settlement(shared().deadLetter(3, "persistent://public/default/orders-dlq"));

        settlement.failed(received(3), BOOM);

        assertThat(calls).containsExactly("negativeAcknowledge m");
        assertThat(metrics.held.get()).isZero();
        assertThat(metrics.deadLettered.get()).isEqualTo(1);
    }

    @Test
    void aMessageMovedToTheCurrentGenerationOnItsLastAttemptComesBackAndIsNoDeadLetter() {
        Settlement<String> settlement =
                writingSettlement(shared().deadLetter(3, "persistent://public/default/orders-dlq"));

        assertThat(settlement.moved(received(3))).isEqualTo(Settled.RETRY);

        // A canary's failure at exactly-once: nacked at once, no letter written, nothing counted against it.
        assertThat(calls).containsExactly("negativeAcknowledge m");
        assertThat(written).isEmpty();
        assertThat(metrics.deadLettered.get()).isZero();
        assertThat(metrics.held.get()).isZero();
    }

    /** Issue 50: the failure line is rate-limited, so the log said "it will be retried" and then nothing. */
    @Test
    void aMessageDeadLetteredOnItsLastAttemptIsSaidInTheLog() {
        Logger letterLog = (Logger) LoggerFactory.getLogger(DeadLettering.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.list = new CopyOnWriteArrayList<>();
        logged.start();
        letterLog.addAppender(logged);
        try {
            Settlement<String> settlement =
                    settlement(shared().deadLetter(3, "persistent://public/default/orders-dlq"));

            settlement.failed(received(2), BOOM);
            assertThat(logged.list).as("not the last attempt").isEmpty();
            settlement.failed(received(3), BOOM);

            assertThat(logged.list)
                    .singleElement()
                    .extracting(ILoggingEvent::getFormattedMessage)
                    .asString()
                    .contains("subscription 'orders'", "message id-1", "attempt 3", "java.lang.IllegalStateException")
                    .contains("goes to the dead-letter topic persistent://public/default/orders-dlq");
        } finally {
            letterLog.detachAppender(logged);
        }
    }

    /** A dead-letter writer that keeps what it was asked to write and completes when the test says. */
    private final List<Map<String, String>> written = new ArrayList<>();

    private final CompletableFuture<Void> stored = new CompletableFuture<>();

    private Settlement<String> writingSettlement(SubscriptionSpec.Builder spec) {
        DeadLetterWriter<String> writer = (work, properties) -> {
            calls.add("write " + work.message());
            written.add(properties);
            return stored;
        };
        return settlement(spec.build(), writer, DeadLettering.LetterWatch.none());
    }

    /** A settlement whose letters Settle writes through {@code writer}, at-least-once. */
    private Settlement<String> settlement(
            SubscriptionSpec spec, DeadLetterWriter<String> writer, DeadLettering.LetterWatch<String> watch) {
        DeadLettering<String> letters = DeadLettering.acknowledged(
                spec, writer, new PendingOutputs(1_000, time), watch, () -> "com.acme.Orders", time);
        return settlement(spec, letters, Settlement.Outage.none());
    }

    @Test
    void aFailedLastAttemptIsWrittenWithItsCauseAndAcknowledgedOnlyOnceTheLetterIsStored() {
        Settlement<String> settlement =
                writingSettlement(shared().deadLetter(3, "persistent://public/default/orders-dlq"));
        time.advance(Duration.ofSeconds(5));
        settlement.failed(received(1), BOOM);
        time.advance(Duration.ofSeconds(7));

        settlement.failed(received(3), new Failure(Failure.Stage.HANDLER, new IllegalStateException("boom")));

        assertThat(calls).containsExactly("negativeAcknowledge m", "write m");
        assertThat(written.get(0))
                .containsEntry(DeadLetterProperties.STAGE, "handler")
                .containsEntry(DeadLetterProperties.EXCEPTION_CLASS, "java.lang.IllegalStateException")
                .containsEntry(DeadLetterProperties.EXCEPTION_MESSAGE, "boom")
                .containsEntry(DeadLetterProperties.ATTEMPTS, "3")
                .containsEntry(DeadLetterProperties.SUBSCRIPTION, "orders")
                .containsEntry(DeadLetterProperties.CODE, "com.acme.Orders")
                .containsEntry(
                        DeadLetterProperties.FIRST_ATTEMPT_TIME,
                        Instant.ofEpochMilli(time.currentTimeMillis() - 7_000).toString())
                .containsEntry(
                        DeadLetterProperties.LAST_ATTEMPT_TIME,
                        Instant.ofEpochMilli(time.currentTimeMillis()).toString())
                .containsKey(DeadLetterProperties.INSTANCE);
        assertThat(written.get(0).get(DeadLetterProperties.EXCEPTION_STACKTRACE))
                .startsWith("java.lang.IllegalStateException: boom")
                .contains("at dev.settle.runtime.driver.SettlementTest");

        stored.complete(null);
        assertThat(calls).containsExactly("negativeAcknowledge m", "write m", "acknowledge m");
        assertThat(metrics.deadLettered.get()).isEqualTo(1);
    }

    @Test
    void aDeadLetterNotStoredNegativelyAcknowledgesTheOriginalSoNothingIsLost() {
        Settlement<String> settlement =
                writingSettlement(shared().deadLetter(3, "persistent://public/default/orders-dlq"));

        settlement.failed(received(3), BOOM);
        stored.completeExceptionally(new IllegalStateException("topic fenced"));

        assertThat(calls).containsExactly("write m", "negativeAcknowledge m");
    }

    /** An exactly-once subscription's writer commits the letter with the acknowledgement: nothing is left to do. */
    @Test
    void aLetterCommittedWithItsAcknowledgementIsNotAcknowledgedAgain() {
        DeadLetterWriter<String> writer = (work, properties) -> {
            calls.add("write " + work.message());
            return stored;
        };
        DeadLettering.LetterCommits<String> commits = (work, write) -> {
            calls.add("begin");
            return write.apply(work).thenApply(written -> {
                calls.add("acknowledge and commit " + work.message());
                return written;
            });
        };
        SubscriptionSpec spec =
                shared().deadLetter(3, "persistent://public/default/orders-dlq").build();
        Settlement<String> settlement = settlement(
                spec,
                DeadLettering.committed(
                        spec,
                        writer,
                        commits,
                        new PendingOutputs(1_000, time),
                        DeadLettering.LetterWatch.none(),
                        () -> "com.acme.Orders",
                        time),
                Settlement.Outage.none());
        UnitOfWork<String> work = received(3);

        settlement.failed(work, BOOM);
        stored.complete(null);

        assertThat(calls).containsExactly("begin", "write m", "acknowledge and commit m");
        assertThat(work.acknowledged()).isPresent();
        assertThat(metrics.deadLettered.get()).isEqualTo(1);
    }

    @Test
    void theStackTraceIsLeftOutWhenTheManifestSaysSoAndLongMessagesAreCapped() {
        Settlement<String> settlement = writingSettlement(shared().deadLetter(Optional.of(
                new DeadLetter(3, "persistent://public/default/orders-dlq", Optional.empty(), false))));

        settlement.failed(
                received(3), new Failure(Failure.Stage.HANDLER, new IllegalStateException("x".repeat(5_000))));

        assertThat(written.get(0)).doesNotContainKey(DeadLetterProperties.EXCEPTION_STACKTRACE);
        assertThat(written.get(0).get(DeadLetterProperties.EXCEPTION_MESSAGE))
                .hasSize(DeadLetterProperties.MESSAGE_CHARS)
                .endsWith("... (cut to 1000 of 5000 characters)");
        assertThat(written.get(0)).doesNotContainKey(DeadLetterProperties.FIRST_ATTEMPT_TIME);
    }

    @Test
    void aRetryOrARefusedRetryAfterOnTheLastAttemptIsWrittenByStage() {
        Settlement<String> settlement = writingSettlement(
                shared().ackTimeout(Duration.ofSeconds(2)).deadLetter(3, "persistent://public/default/orders-dlq"));

        settlement.apply(received(3), Outcome.retry());
        settlement.apply(received(3), Outcome.retryAfter(Duration.ofSeconds(5)));

        assertThat(written)
                .extracting(properties -> properties.get(DeadLetterProperties.STAGE))
                .containsExactly("retry", "refused_retry_after");
        assertThat(written.get(1).get(DeadLetterProperties.EXCEPTION_CLASS))
                .isEqualTo(RetryAfterRefusedException.class.getName());
    }

    @Test
    void aRetryAfterHeldOnTheLastAttemptIsWrittenWithItsStageWhenTheHoldEnds() {
        Settlement<String> settlement = writingSettlement(
                shared().ackTimeout(Duration.ofSeconds(30)).deadLetter(3, "persistent://public/default/orders-dlq"));

        settlement.apply(received(3), Outcome.retryAfter(Duration.ofSeconds(1)));
        assertThat(written).isEmpty();
        time.advance(Duration.ofSeconds(1));

        assertThat(written)
                .extracting(properties -> properties.get(DeadLetterProperties.STAGE))
                .containsExactly("retry");
        assertThat(calls).containsExactly("write m");
    }

    /** The duplicate guard holds a copy's twin back from the decision to dead-letter it until its letter is in. */
    @Test
    void theLetterWatchIsToldFromTheLastAttemptsHoldUntilItsLetterIsStored() {
        List<String> watched = new ArrayList<>();
        DeadLettering.LetterWatch<String> watch = new DeadLettering.LetterWatch<>() {
            @Override
            public void lettering(String message) {
                watched.add("lettering " + message);
            }

            @Override
            public void lettered(String message, boolean acknowledged) {
                watched.add("lettered " + message + (acknowledged ? ", acknowledged" : ", not acknowledged"));
            }
        };
        DeadLetterWriter<String> writer = (work, properties) -> {
            calls.add("write " + work.message());
            return stored;
        };
        Settlement<String> settlement = settlement(
                shared().ackTimeout(Duration.ofSeconds(30))
                        .deadLetter(3, "persistent://public/default/orders-dlq")
                        .build(),
                writer,
                watch);

        settlement.apply(received(1), Outcome.retryAfter(Duration.ofSeconds(1)));
        settlement.failed(received(2), BOOM);
        assertThat(watched).as("no letter before the last attempt").isEmpty();

        settlement.apply(received(3), Outcome.retryAfter(Duration.ofSeconds(1)));
        assertThat(watched).as("from the hold on").containsExactly("lettering m");
        time.advance(Duration.ofSeconds(1));
        assertThat(calls).endsWith("write m");
        assertThat(watched).as("still being written").doesNotContain("lettered m, acknowledged");
        stored.complete(null);

        assertThat(watched).last().isEqualTo("lettered m, acknowledged");
        assertThat(calls).endsWith("write m", "acknowledge m");
    }

    @Test
    void noOutcomeOnTheLastAttemptIsLeftToTheClientWhichWritesItWithoutACause() {
        Settlement<String> settlement = writingSettlement(
                shared().ackTimeout(Duration.ofSeconds(2)).deadLetter(3, "persistent://public/default/orders-dlq"));

        settlement.apply(received(3), null);

        assertThat(calls).isEmpty();
        assertThat(written).isEmpty();
        assertThat(metrics.deadLettered.get()).isEqualTo(1);
    }

    @Test
    void withFailureBackoffNoneAFailureComesBackAtOnce() {
        Settlement<String> settlement = settlement(shared().failureBackoff(Optional.empty()));

        settlement.failed(received(7), BOOM);

        assertThat(calls).containsExactly("negativeAcknowledge m");
        assertThat(metrics.held.get()).isZero();
    }

    @Test
    void aFailureBackoffEndsBeforeTheAckTimeoutWouldFire() {
        Settlement<String> settlement = settlement(shared().ackTimeout(Duration.ofSeconds(1)));
        UnitOfWork<String> received = received(5);
        time.advance(millis(300));

        // 1600ms by the backoff; 700ms of the ack timeout are left, so it goes 50ms before that.
        settlement.failed(received, BOOM);
        time.advance(millis(649));
        assertThat(calls).isEmpty();
        time.advance(millis(1));
        assertThat(calls).containsExactly("negativeAcknowledge m");
    }

    @Test
    void aFailedLastAttemptCountsAsDeadLettered() {
        Settlement<String> settlement = settlement(shared().deadLetter(3, "persistent://public/default/orders-dlq"));

        settlement.apply(received(2), Outcome.retry());
        assertThat(metrics.deadLettered.get()).isZero();
        settlement.apply(received(3), Outcome.retry());
        assertThat(metrics.deadLettered.get()).isEqualTo(1);
        settlement.failed(received(3), BOOM);
        assertThat(metrics.deadLettered.get()).isEqualTo(2);
        settlement.apply(received(3), Outcome.ack());
        assertThat(metrics.deadLettered.get()).isEqualTo(2);
    }

    @Test
    void noOutcomeOnTheLastAttemptIsDeadLetteredOnlyWithAnAckTimeout() {
        settlement(shared().deadLetter(2, "persistent://public/default/orders-dlq"))
                .apply(received(2), null);
        assertThat(metrics.deadLettered.get()).isZero();

        settlement(shared().deadLetter(2, "persistent://public/default/orders-dlq")
                        .ackTimeout(Duration.ofSeconds(5)))
                .apply(received(2), null);
        assertThat(metrics.deadLettered.get()).isEqualTo(1);
    }

    private static Outcome instanceOf(Class<?> type) throws Exception {
        Constructor<?> constructor = type.getDeclaredConstructors()[0];
        Object[] arguments = new Object[constructor.getParameterCount()];
        for (int i = 0; i < arguments.length; i++) {
            arguments[i] = constructor.getParameterTypes()[i] == Duration.class ? Duration.ofSeconds(1) : null;
        }
        constructor.setAccessible(true);
        return (Outcome) constructor.newInstance(arguments);
    }

    @Test
    void aFailureWhoseBackoffEndsWhileTheBreakerKeepsItIsNotNegativelyAcknowledged() {
        List<String> offered = new ArrayList<>();
        AtomicBoolean open = new AtomicBoolean();
        Settlement.Outage<String> breaker = new Settlement.Outage<>() {
            @Override
            public boolean isDependency(Failure failure) {
                return failure.cause() instanceof java.io.IOException;
            }

            @Override
            public boolean keeps(UnitOfWork<String> kept) {
                offered.add(kept.message() + " attempt " + kept.attempt());
                return open.get();
            }
        };
        SubscriptionSpec spec = shared().build();
        Settlement<String> settlement = settlement(spec, DeadLettering.byClient(spec, time), breaker);
        Failure down = new Failure(Failure.Stage.HANDLER, new java.net.ConnectException("db down"));

        settlement.failed(received(1), down);
        time.advance(millis(100));
        assertThat(offered).containsExactly("m attempt 1");
        assertThat(calls).as("closed: nacked").containsExactly("negativeAcknowledge m");

        open.set(true);
        settlement.failed(received(2), down);
        time.advance(millis(200));
        assertThat(calls).as("kept by the open breaker: no nack").containsExactly("negativeAcknowledge m");
        assertThat(metrics.held.get()).as("no longer held by the settlement").isZero();

        settlement.failed(received(3), BOOM);
        time.advance(millis(400));
        assertThat(offered).as("another cause is never offered").hasSize(2);
        assertThat(calls).containsExactly("negativeAcknowledge m", "negativeAcknowledge m");
    }

    @Test
    void aHeldFailureKeepsNeitherItsCauseNorItsUnitOfWorkAlive() {
        Settlement<String> settlement = settlement(shared().failureBackoff(Optional.of(FailureBackoff.DEFAULT)));
        List<WeakReference<Object>> held = failAndHold(settlement);

        // Only the held wait could still reach them: a collection frees both while the message is held.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (held.stream().anyMatch(ref -> ref.get() != null)) {
            assertThat(System.nanoTime())
                    .as("the held wait still keeps the failure's cause or its unit of work")
                    .isLessThan(deadline);
            System.gc();
        }
        assertThat(calls).isEmpty();
        time.advance(Duration.ofSeconds(1));
        assertThat(calls).containsExactly("negativeAcknowledge m");
    }

    /** A delivery that failed and is held for its backoff; the unit of work and the cause, held weakly. */
    private List<WeakReference<Object>> failAndHold(Settlement<String> settlement) {
        UnitOfWork<String> work = received(1);
        IllegalStateException cause = new IllegalStateException("boom");
        assertThat(settlement.failed(work, new Failure(Failure.Stage.HANDLER, cause)))
                .isEqualTo(Settled.ERROR);
        assertThat(metrics.held.get()).isEqualTo(1);
        return List.of(new WeakReference<>(work), new WeakReference<>(cause));
    }
}
