package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.pulsar.client.api.PulsarClientException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The dead-letter part on its own, with fakes of its ports: what a letter carries, what it leaves the settlement to do
 * with the original, the pending-send bound, the duplicate guard's watch and the stop's wait.
 */
class DeadLetteringTest {
    private static final SubscriptionSpec CAPPED = SubscriptionSpec.builder(
                    "orders", List.of("persistent://public/default/orders"))
            .type(SubscriptionKind.SHARED)
            .deadLetter(3, "persistent://public/default/orders-dlq")
            .build();
    private static final Failure BOOM = new Failure(Failure.Stage.HANDLER, new IllegalStateException("boom"));

    private final ManualTime time = new ManualTime();
    private final PendingOutputs pending = new PendingOutputs(1, time);
    private final CompletableFuture<Object> stored = new CompletableFuture<>();
    private final List<Map<String, String>> written = new ArrayList<>();
    private final List<String> watched = new ArrayList<>();
    private final List<DeadLettering.Stored> settled = new ArrayList<>();

    private final DeadLetterWriter<String> writer = (work, properties) -> {
        written.add(properties);
        return stored;
    };
    private final DeadLettering.LetterWatch<String> watch = new DeadLettering.LetterWatch<>() {
        @Override
        public void lettering(String message) {
            watched.add("lettering " + message);
        }

        @Override
        public void lettered(String message, boolean acknowledged) {
            watched.add("lettered " + message + (acknowledged ? ", acknowledged" : ", not acknowledged"));
        }
    };

    private final Logger letterLog = (Logger) LoggerFactory.getLogger(DeadLettering.class);
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

    @BeforeEach
    void listen() {
        logged.list = new CopyOnWriteArrayList<>();
        logged.start();
        letterLog.addAppender(logged);
    }

    @AfterEach
    void stopTimer() {
        letterLog.detachAppender(logged);
        time.close();
    }

    private List<String> lines() {
        return logged.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Test
    void aMessageGoingToTheDeadLetterTopicIsLoggedWithItsAttemptCauseAndTopicAtMostOnceInTenSeconds() {
        DeadLettering<String> letters = acknowledged();

        letters.goes(failed(3, BOOM));
        letters.goes(failed(3, BOOM));
        letters.goes(failed(3, Failure.without(Failure.Stage.RETRY)));
        time.advance(Duration.ofSeconds(10));
        letters.goes(failed(3, Failure.without(Failure.Stage.ACK_TIMEOUT)));

        assertThat(lines())
                .containsExactly(
                        "subscription 'orders': message id-1 goes to the dead-letter topic"
                                + " persistent://public/default/orders-dlq after its last attempt (attempt 3, stage"
                                + " handler, java.lang.IllegalStateException); Settle writes its letter, with the cause",
                        "subscription 'orders': message id-1 goes to the dead-letter topic"
                                + " persistent://public/default/orders-dlq after its last attempt (attempt 3, stage"
                                + " ack_timeout, no exception); the Pulsar client writes its letter, without a cause,"
                                + " once the ack timeout brings it back (2 more dead-lettered in the last 10 s not"
                                + " logged)");
    }

    @Test
    void aMessageWhoseLetterTheClientWritesIsLoggedToo() {
        DeadLettering.<String>byClient(CAPPED, time).goes(failed(3, BOOM));

        assertThat(lines())
                .singleElement()
                .asString()
                .contains("message id-1 goes to the dead-letter topic persistent://public/default/orders-dlq")
                .endsWith("the Pulsar client writes its letter, without a cause");
    }

    private DeadLettering<String> acknowledged() {
        return DeadLettering.acknowledged(CAPPED, writer, pending, watch, () -> "com.acme.Orders", time);
    }

    private static UnitOfWork<String> failed(int attempt, Failure why) {
        UnitOfWork<String> work = new UnitOfWork<>("m", "id-1", attempt, false, 0);
        work.failed(why);
        return work;
    }

    @Test
    void theCapIsTheLastAttemptAndOnlyALastAttemptWithACauseIsWrittenBySettle() {
        DeadLettering<String> letters = acknowledged();

        assertThat(letters.capReached(failed(2, BOOM))).isFalse();
        assertThat(letters.capReached(failed(3, BOOM))).isTrue();
        assertThat(letters.writes(failed(2, BOOM))).isFalse();
        assertThat(letters.writes(failed(3, BOOM))).isTrue();
        assertThat(letters.writes(failed(3, Failure.without(Failure.Stage.ACK_TIMEOUT))))
                .as("the client writes an ack timeout's letter")
                .isFalse();
        assertThat(letters.writes(failed(3, Failure.without(Failure.Stage.RETRY))))
                .isTrue();
    }

    @Test
    void byTheClientNothingIsWrittenAndAStopHasNothingToWaitFor() throws Exception {
        DeadLettering<String> letters = DeadLettering.byClient(CAPPED, time);

        assertThat(letters.capReached(failed(3, BOOM))).isTrue();
        assertThat(letters.writes(failed(3, BOOM))).isFalse();
        letters.failedOnce(failed(1, BOOM));
        assertThat(letters.awaitNone(Duration.ZERO)).isTrue();
    }

    @Test
    void aStoredLetterCarriesItsCauseAndFirstFailureAndLeavesTheOriginalToBeAcknowledged() throws Exception {
        DeadLettering<String> letters = acknowledged();
        time.advance(Duration.ofSeconds(5));
        letters.failedOnce(failed(1, BOOM));
        long first = time.currentTimeMillis();
        time.advance(Duration.ofSeconds(7));

        letters.write(failed(3, BOOM), BOOM, settled::add);

        assertThat(written.get(0))
                .containsEntry(DeadLetterProperties.STAGE, "handler")
                .containsEntry(DeadLetterProperties.EXCEPTION_CLASS, "java.lang.IllegalStateException")
                .containsEntry(DeadLetterProperties.EXCEPTION_MESSAGE, "boom")
                .containsEntry(DeadLetterProperties.ATTEMPTS, "3")
                .containsEntry(DeadLetterProperties.CODE, "com.acme.Orders")
                .containsEntry(
                        DeadLetterProperties.FIRST_ATTEMPT_TIME,
                        Instant.ofEpochMilli(first).toString());
        assertThat(settled).as("nothing settled before the letter is stored").isEmpty();
        assertThat(watched).containsExactly("lettering m");
        assertThat(letters.awaitNone(Duration.ZERO)).as("a letter in flight").isFalse();

        stored.complete(null);

        assertThat(settled).containsExactly(DeadLettering.Stored.STORED);
        assertThat(watched).containsExactly("lettering m", "lettered m, acknowledged");
        assertThat(letters.awaitNone(Duration.ZERO)).isTrue();
    }

    @Test
    void aLetterSaysHowManyOfItsKeysLaterMessagesWentBeforeItOnlyWhenSomeDid() {
        DeadLettering<String> letters = acknowledged();
        UnitOfWork<String> passed = failed(3, BOOM);
        passed.keyPassedBy(4);

        letters.write(failed(3, BOOM), BOOM, settled::add);
        letters.write(passed, BOOM, settled::add);

        assertThat(written.get(0)).doesNotContainKey(DeadLetterProperties.KEY_PASSED);
        assertThat(written.get(1)).containsEntry(DeadLetterProperties.KEY_PASSED, "4");
    }

    @Test
    void aLetterHoldsTheReceiverAtTheBoundUntilItIsStored() throws Exception {
        acknowledged().write(failed(3, BOOM), BOOM, settled::add);

        assertThat(pending.sends()).isEqualTo(1);
        assertThat(pending.awaitRoom(() -> true))
                .as("no room at maxPendingOutputs 1")
                .isFalse();
        stored.complete(null);
        assertThat(pending.sends()).isZero();
        assertThat(pending.awaitRoom(() -> true)).isTrue();
    }

    @Test
    void aLetterNotStoredOrAWriterThatThrowsGivesItsRoomBackAndTheOriginalIsNegativelyAcknowledged() {
        acknowledged().write(failed(3, BOOM), BOOM, settled::add);
        stored.completeExceptionally(new IllegalStateException("topic fenced"));
        DeadLettering.acknowledged(
                        CAPPED,
                        (DeadLetterWriter<String>) (work, properties) -> {
                            throw new IllegalStateException("producer closed");
                        },
                        pending,
                        watch,
                        () -> "com.acme.Orders",
                        time)
                .write(failed(3, BOOM), BOOM, settled::add);

        assertThat(settled).containsExactly(DeadLettering.Stored.NOT_STORED, DeadLettering.Stored.NOT_STORED);
        assertThat(pending.sends()).isZero();
        assertThat(watched).endsWith("lettered m, not acknowledged");
    }

    @Test
    void exactlyOnceTheLetterIsCommittedWithItsOriginalAndAConflictLeavesItToItsTwin() {
        List<String> calls = new ArrayList<>();
        DeadLettering.LetterCommits<String> commits = (work, write) -> {
            calls.add("begin");
            return write.apply(work);
        };
        DeadLettering<String> letters =
                DeadLettering.committed(CAPPED, writer, commits, pending, watch, () -> "com.acme.Orders", time);

        letters.write(failed(3, BOOM), BOOM, settled::add);
        stored.complete(null);
        CompletableFuture<Object> refused = new CompletableFuture<>();
        DeadLettering.committed(
                        CAPPED, (work, properties) -> refused, commits, pending, watch, () -> "com.acme.Orders", time)
                .write(failed(3, BOOM), BOOM, settled::add);
        refused.completeExceptionally(
                new PulsarClientException.TransactionConflictException("held by another transaction"));

        assertThat(calls).containsExactly("begin", "begin");
        assertThat(settled).containsExactly(DeadLettering.Stored.COMMITTED, DeadLettering.Stored.LEFT_TO_ITS_TWIN);
    }

    @Test
    void atLeastOnceAConflictIsNoTwinsBusinessTheOriginalComesBack() {
        acknowledged().write(failed(3, BOOM), BOOM, settled::add);
        stored.completeExceptionally(new PulsarClientException.TransactionConflictException("conflict"));

        assertThat(settled).containsExactly(DeadLettering.Stored.NOT_STORED);
    }
}
