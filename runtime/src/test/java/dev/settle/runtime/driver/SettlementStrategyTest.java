package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.ManualTime;
import dev.settle.sdk.Outcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.junit.jupiter.api.Test;

/** How a guarantee settles a delivery whose call is over: chosen once, then now or once a stage completes. */
class SettlementStrategyTest {
    private final List<String> events = new CopyOnWriteArrayList<>();
    /** Settles as Processing does, noting what it was asked. */
    private final InFlight.Settler settler = new InFlight.Settler() {
        @Override
        public void settle(InFlight delivery, CompletableFuture<Outcome> outcome) {
            events.add(
                    outcome.isCompletedExceptionally()
                            ? "settled as a failure: "
                                    + cause(outcome).getClass().getSimpleName()
                            : "settled " + Settlement.classify(outcome.join()).label());
            delivery.endCall();
        }

        @Override
        public void settleAfter(
                InFlight delivery,
                int sends,
                Supplier<CompletableFuture<?>> until,
                Function<Throwable, CompletableFuture<Outcome>> then) {
            events.add("waits for " + sends + " sends");
            delivery.endCall();
            until.get().whenComplete((none, error) -> settle(delivery, then.apply(error)));
        }
    };

    @Test
    void theSubscriptionsGuaranteeChoosesItsStrategyOnce() {
        ManualTime time = new ManualTime();
        SubscriptionSpec.Builder spec =
                SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"));

        assertThat(SettlementStrategy.of(spec.build(), null, null, new RecordingMetrics(), time))
                .isSameAs(SettlementStrategy.atLeastOnce());
        assertThat(SettlementStrategy.of(
                        spec.guarantee(Guarantee.EXACTLY_ONCE).build(),
                        timeout -> new CompletableFuture<>(),
                        (inputs, transaction) -> CompletableFuture.completedFuture(null),
                        new RecordingMetrics(),
                        time))
                .isInstanceOf(ExactlyOnce.class);
    }

    @Test
    void atLeastOnceGivesTheCallBackAndAcknowledgesOnceItsOutputsAreStored() {
        CompletableFuture<MessageId> stored = new CompletableFuture<>();
        InFlight delivery = delivery();
        delivery.work().outputs(null).add(stored);

        SettlementStrategy.atLeastOnce()
                .callOver(delivery, CompletableFuture.completedFuture(Outcome.ack()), Outcome.ack());
        assertThat(events).containsExactly("waits for 1 sends", "call ended");
        stored.complete(MessageId.earliest);

        assertThat(events).containsExactly("waits for 1 sends", "call ended", "settled ack");
    }

    @Test
    void atLeastOnceMakesAnAcknowledgementWhoseOutputWasNotStoredAFailure() {
        CompletableFuture<MessageId> stored = new CompletableFuture<>();
        InFlight delivery = delivery();
        delivery.work().outputs(null).add(stored);

        SettlementStrategy.atLeastOnce()
                .callOver(delivery, CompletableFuture.completedFuture(Outcome.ack()), Outcome.ack());
        stored.completeExceptionally(new IllegalStateException("the broker is gone"));

        assertThat(events).last().isEqualTo("settled as a failure: OutputNotDurableException");
    }

    @Test
    void atLeastOnceSettlesARetryAtOnceWhateverItsOutputs() {
        InFlight delivery = delivery();
        delivery.work().outputs(null).add(new CompletableFuture<>());

        SettlementStrategy.atLeastOnce()
                .callOver(delivery, CompletableFuture.completedFuture(Outcome.retry()), Outcome.retry());

        assertThat(events).containsExactly("settled retry", "call ended");
    }

    @Test
    void theGuaranteePicksHowDeadLettersAreWrittenAndThePipelineKeepsTheirCap() {
        ManualTime time = new ManualTime();
        SubscriptionSpec.Builder spec = SubscriptionSpec.builder(
                        "orders", List.of("persistent://public/default/orders"))
                .type(SubscriptionKind.SHARED)
                .deadLetter(2, "persistent://public/default/orders-dlq");
        List<String> written = new CopyOnWriteArrayList<>();
        DeadLetterWriter<Message<?>> writer = (work, properties) -> {
            written.add("letter of " + work.id());
            return CompletableFuture.completedFuture(MessageId.earliest);
        };
        PendingOutputs pending = new PendingOutputs(10, time);
        List<DeadLettering.Stored> settled = new CopyOnWriteArrayList<>();

        // At-least-once: the letter is written at once, then the original is to be acknowledged.
        DeadLettering<Message<?>> acknowledged = SettlementStrategy.atLeastOnce()
                .deadLettering(spec.build(), writer, pending, DeadLettering.LetterWatch.none(), () -> "code", time);
        acknowledged.write(lastAttempt(), BOOM, settled::add);
        assertThat(written).containsExactly("letter of " + MessageId.earliest);
        assertThat(settled).containsExactly(DeadLettering.Stored.STORED);

        // Exactly-once: the letter waits for a transaction of its own; none can be begun, so none is written and the
        // original is negatively acknowledged.
        written.clear();
        settled.clear();
        SettlementStrategy exactlyOnce = SettlementStrategy.of(
                spec.guarantee(Guarantee.EXACTLY_ONCE).build(),
                timeout -> CompletableFuture.failedFuture(new IllegalStateException("no transaction coordinator")),
                (inputs, transaction) -> CompletableFuture.completedFuture(null),
                new RecordingMetrics(),
                time);
        exactlyOnce
                .deadLettering(spec.build(), writer, pending, DeadLettering.LetterWatch.none(), () -> "code", time)
                .write(lastAttempt(), BOOM, settled::add);
        assertThat(written).isEmpty();
        assertThat(settled).containsExactly(DeadLettering.Stored.NOT_STORED);

        // No writer of Settle's: the client's policy writes every letter.
        DeadLettering<Message<?>> byClient = exactlyOnce.deadLettering(
                spec.build(), null, pending, DeadLettering.LetterWatch.none(), () -> "code", time);
        UnitOfWork<Message<?>> last = lastAttempt();
        last.failed(BOOM);
        assertThat(byClient.writes(last)).isFalse();
        assertThat(byClient.describe()).endsWith("written by the Pulsar client's policy");
        assertThat(acknowledged.writes(last)).isTrue();

        // One cap: the pipeline's cap slot is the dead letters' own.
        assertThat(Pipeline.of(spec.build(), acknowledged, Pipeline.Journal.NONE)
                        .cap())
                .isSameAs(acknowledged.cap());
        assertThat(acknowledged.cap().isLastAttempt(2)).isTrue();
        assertThat(acknowledged.cap().isLastAttempt(1)).isFalse();
        exactlyOnce.close();
        time.close();
    }

    private static final Failure BOOM = new Failure(Failure.Stage.HANDLER, new IllegalStateException("boom"));

    private static UnitOfWork<Message<?>> lastAttempt() {
        return new UnitOfWork<>(UnitOfWorkTest.message(MessageId.earliest, 1), MessageId.earliest, 2, false, 0);
    }

    private InFlight delivery() {
        Message<?> message = UnitOfWorkTest.message(MessageId.earliest);
        return new InFlight(
                settler,
                new UnitOfWork<>(message, MessageId.earliest, 1, false, 0),
                null,
                0,
                () -> events.add("call ended"),
                how -> {},
                InFlight.Deadline.never(new dev.settle.runtime.time.ManualTime()));
    }

    private static Throwable cause(CompletableFuture<Outcome> outcome) {
        try {
            outcome.join();
            throw new AssertionError("not a failure");
        } catch (CompletionException e) {
            return e.getCause();
        }
    }
}
