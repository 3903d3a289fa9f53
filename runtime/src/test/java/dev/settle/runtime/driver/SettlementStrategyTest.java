package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.Guarantee;
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

    private InFlight delivery() {
        Message<?> message = UnitOfWorkTest.message(MessageId.earliest);
        return new InFlight(
                settler,
                new UnitOfWork<>(message, MessageId.earliest, 1, false, 0),
                null,
                0,
                () -> events.add("call ended"),
                how -> {});
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
