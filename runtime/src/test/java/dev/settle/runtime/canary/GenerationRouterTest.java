package dev.settle.runtime.canary;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.driver.DeliveryFixtures;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.MovedToCurrentGeneration;
import dev.settle.runtime.driver.UnitOfWork;
import dev.settle.runtime.time.ManualTime;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

class GenerationRouterTest {
    private final ManualTime time = new ManualTime();
    private final Outcomes currentCounts = new Outcomes();
    private final Outcomes canaryCounts = new Outcomes();
    private final MovedMessages moved = new MovedMessages();

    /** A generation's port that records each key it is called with and answers as told. */
    private static final class Port implements HandlerPort {
        final List<String> keys = new ArrayList<>();
        volatile Answer answer = Answer.ACK;
        CompletableFuture<Outcome> pending;

        enum Answer {
            ACK,
            RETRY,
            THROW,
            FAILED_STAGE,
            LATER,
            /** Sends an output in the delivery (its transaction, at exactly-once), then throws. */
            SEND_THEN_THROW
        }

        @Override
        public Schema<?> schema() {
            return Schema.STRING;
        }

        @Override
        public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) throws Exception {
            keys.add(work.message().getKey());
            return switch (answer) {
                case ACK -> CompletableFuture.completedFuture(Outcome.ack());
                case RETRY -> CompletableFuture.completedFuture(Outcome.retry());
                case THROW -> throw new IllegalStateException("canary bug");
                case FAILED_STAGE -> CompletableFuture.failedFuture(new IllegalStateException("canary bug"));
                case LATER -> pending = new CompletableFuture<>();
                case SEND_THEN_THROW -> {
                    work.outputs(null).add(new CompletableFuture<>());
                    throw new IllegalStateException("canary bug after a send");
                }
            };
        }
    }

    private final Port current = new Port();
    private final Port canary = new Port();

    private GenerationRouter router(int percent) {
        return new GenerationRouter(
                new GenerationRouter.Side(current, 1, currentCounts),
                new GenerationRouter.Side(canary, 2, canaryCounts),
                KeySlice.of(percent),
                time,
                "router at " + percent,
                moved);
    }

    /** A key inside the 5% slice, and one outside it. */
    private static String key(boolean inFivePercent) {
        for (int i = 0; ; i++) {
            if (KeySlice.of(5).contains(Messages.keyed("key-" + i)) == inFivePercent) {
                return "key-" + i;
            }
        }
    }

    private static UnitOfWork<Message<?>> work(String key) {
        return Messages.work(Messages.keyed(key));
    }

    @Test
    void keysInTheSliceGoToTheCanaryAndTheRestToTheCurrentGeneration() throws Exception {
        GenerationRouter router = router(5);
        for (int i = 0; i < 2_000; i++) {
            router.handle(work("key-" + i));
        }
        assertThat(canary.keys).allMatch(k -> KeySlice.of(5).contains(Messages.keyed(k)));
        assertThat(current.keys).noneMatch(k -> KeySlice.of(5).contains(Messages.keyed(k)));
        assertThat(canary.keys.size() + current.keys.size()).isEqualTo(2_000);
        assertThat(canaryCounts.snapshot().calls()).isEqualTo(canary.keys.size());
        assertThat(currentCounts.snapshot().calls()).isEqualTo(current.keys.size());
    }

    @Test
    void eachDeliveryIsNamedByTheGenerationWhoseAnswerSettlesIt() throws Exception {
        var onCanary = work(key(true));
        var onCurrent = work(key(false));
        router(5).handle(onCanary);
        router(5).handle(onCurrent);
        assertThat(DeliveryFixtures.generationOf(onCanary)).isEqualTo(2);
        assertThat(DeliveryFixtures.generationOf(onCurrent)).isEqualTo(1);

        // A failed canary call handed on in its delivery is settled by the current generation's answer.
        canary.answer = Port.Answer.THROW;
        var handedOn = work(key(true));
        router(5).handle(handedOn);
        assertThat(DeliveryFixtures.generationOf(handedOn)).isEqualTo(1);
    }

    @Test
    void aKeyInTheFirstStepStaysOnTheCanaryAtEveryLaterStep() throws Exception {
        List<String> onCanaryAtFive = new ArrayList<>();
        for (int i = 0; i < 2_000; i++) {
            if (KeySlice.of(5).contains(Messages.keyed("key-" + i))) {
                onCanaryAtFive.add("key-" + i);
            }
        }
        GenerationRouter later = router(25);
        for (String key : onCanaryAtFive) {
            later.handle(work(key));
        }
        assertThat(canary.keys).containsExactlyElementsOf(onCanaryAtFive);
        assertThat(current.keys).isEmpty();
    }

    @Test
    void aCanaryThatThrowsHandsTheMessageToTheCurrentGenerationInTheSameDelivery() throws Exception {
        canary.answer = Port.Answer.THROW;
        String key = key(true);
        Outcome outcome = router(5).handle(work(key)).toCompletableFuture().join();
        assertThat(outcome).isEqualTo(Outcome.ack());
        assertThat(canary.keys).containsExactly(key);
        assertThat(current.keys).containsExactly(key);
        assertThat(canaryCounts.snapshot().failures()).isEqualTo(1);
        // The fallback is the current generation's code on the canary's keys: not counted for either side.
        assertThat(currentCounts.snapshot().calls()).isZero();
    }

    @Test
    void aCanaryStageThatFailsHandsTheMessageToTheCurrentGeneration() throws Exception {
        canary.answer = Port.Answer.FAILED_STAGE;
        current.answer = Port.Answer.RETRY;
        // The settlement sees the current generation's answer: its retry, never the canary's failure.
        assertThat(router(5).handle(work(key(true))).toCompletableFuture().join())
                .isEqualTo(Outcome.retry());
        assertThat(canaryCounts.snapshot().failures()).isEqualTo(1);
    }

    @Test
    void aCanaryFailingLaterHandsTheMessageToTheCurrentGenerationThen() throws Exception {
        canary.answer = Port.Answer.LATER;
        var stage = router(5).handle(work(key(true))).toCompletableFuture();
        assertThat(stage).isNotDone();
        assertThat(current.keys).isEmpty();
        time.advance(Duration.ofMillis(30));
        canary.pending.completeExceptionally(new IllegalStateException("late canary bug"));
        assertThat(stage.join()).isEqualTo(Outcome.ack());
        assertThat(current.keys).hasSize(1);
        var counts = canaryCounts.snapshot();
        assertThat(counts.failures()).isEqualTo(1);
        assertThat(counts.p99Millis()).isBetween(30.0, 36.0);
    }

    @Test
    void atExactlyOnceACanaryThatFailsBeforeSendingIsHandedOnInTheSameDelivery() throws Exception {
        canary.answer = Port.Answer.THROW;
        String key = key(true);
        var work = DeliveryFixtures.inTransaction(Messages.keyed(key), 1);
        // Nothing of the canary is in the transaction: the current generation's outputs are its only ones.
        assertThat(router(5).handle(work).toCompletableFuture().join()).isEqualTo(Outcome.ack());
        assertThat(current.keys).containsExactly(key);
        assertThat(moved.size()).isZero();
    }

    @Test
    void atExactlyOnceACanaryThatFailsAfterSendingIsMovedAndItsNextAttemptGoesToTheCurrentGeneration()
            throws Exception {
        canary.answer = Port.Answer.SEND_THEN_THROW;
        String key = key(true);
        Message<?> message = Messages.message(key, id(7));
        var first = router(5).handle(DeliveryFixtures.inTransaction(message, 1)).toCompletableFuture();
        // Not handed on in the delivery: the canary's output is in its transaction, which the failure aborts.
        assertThatThrownBy(first::join).hasCauseInstanceOf(MovedToCurrentGeneration.class);
        assertThat(current.keys).isEmpty();
        assertThat(canaryCounts.snapshot().failures()).isEqualTo(1);

        // Its next attempt, under the next step's router too, is the current generation's; the one after is not.
        assertThat(router(25)
                        .handle(DeliveryFixtures.inTransaction(message, 2))
                        .toCompletableFuture()
                        .join())
                .isEqualTo(Outcome.ack());
        assertThat(current.keys).containsExactly(key);
        canary.answer = Port.Answer.ACK;
        router(25).handle(DeliveryFixtures.inTransaction(message, 3));
        assertThat(canary.keys).containsExactly(key, key);
    }

    @Test
    void atAtLeastOnceACanaryThatFailsAfterSendingIsHandedOnInTheSameDelivery() throws Exception {
        canary.answer = Port.Answer.SEND_THEN_THROW;
        assertThat(router(5).handle(work(key(true))).toCompletableFuture().join())
                .isEqualTo(Outcome.ack());
        assertThat(current.keys).hasSize(1);
        assertThat(moved.size()).isZero();
    }

    private static MessageId id(long entry) {
        return new org.apache.pulsar.client.impl.MessageIdImpl(1, entry, -1);
    }

    @Test
    void theCanarysOwnOutcomesSettleAsTheySayAndAreCountedApart() throws Exception {
        canary.answer = Port.Answer.RETRY;
        assertThat(router(5).handle(work(key(true))).toCompletableFuture().join())
                .isEqualTo(Outcome.retry());
        assertThat(current.keys).isEmpty();
        assertThat(canaryCounts.snapshot().retries()).isEqualTo(1);
        assertThat(canaryCounts.snapshot().failures()).isZero();
    }

    @Test
    void theCurrentGenerationsFailuresAreItsOwnAndCounted() throws Exception {
        current.answer = Port.Answer.FAILED_STAGE;
        var stage = router(5).handle(work(key(false))).toCompletableFuture();
        assertThat(stage).isCompletedExceptionally();
        assertThat(canary.keys).isEmpty();
        assertThat(currentCounts.snapshot().failures()).isEqualTo(1);
    }
}
