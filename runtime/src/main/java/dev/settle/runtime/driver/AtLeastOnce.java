package dev.settle.runtime.driver;

import dev.settle.runtime.publish.Publishes;
import dev.settle.sdk.Outcome;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.pulsar.client.api.Message;

/**
 * At-least-once: an outcome that acknowledges, of a call whose sends are not all durable yet, gives its call back at
 * once and is settled when they are (publish-then-ack: a send that fails makes the delivery a failure, retried with
 * the failure backoff); anything else is settled now. Stateless.
 */
final class AtLeastOnce implements SettlementStrategy {
    static final AtLeastOnce INSTANCE = new AtLeastOnce();

    private AtLeastOnce() {}

    @Override
    public void callOver(InFlight delivery, CompletableFuture<Outcome> outcome, Outcome returned) {
        UnitOfWork<Message<?>> work = delivery.work();
        Optional<Publishes> publishes = work.outputs();
        if (SettlementStrategy.acknowledges(returned)
                && publishes.isPresent()
                && publishes.get().count() > 0) {
            CompletableFuture<Void> durable = publishes.get().durable();
            if (!durable.isDone()) {
                delivery.settleAfter(
                        publishes.get().count(), () -> durable, error -> afterOutputs(work, outcome, error));
                return;
            }
            if (durable.isCompletedExceptionally()) {
                // A window let go of by a stop that began while this call ran is left alone here too (issue 41).
                delivery.settle(afterOutputs(
                        work, outcome, durable.handle((none, error) -> error).join()));
                return;
            }
        }
        delivery.settle(outcome);
    }

    /**
     * What an acknowledging outcome becomes once the call's outputs are done: itself when they were stored; left
     * unacknowledged, neither a failure nor a missing outcome, when one was let go of on purpose
     * ({@link LeftUnacknowledged}); else a failure.
     */
    private static CompletableFuture<Outcome> afterOutputs(
            UnitOfWork<Message<?>> work, CompletableFuture<Outcome> outcome, Throwable error) {
        if (error == null) {
            return outcome;
        }
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof LeftUnacknowledged) {
            return CompletableFuture.failedFuture(cause);
        }
        return CompletableFuture.failedFuture(new OutputNotDurableException(
                "an output of message " + work.id() + " was not stored (" + cause
                        + "); the input is not acknowledged and will come back",
                cause));
    }

    @Override
    public String toString() {
        return "at-least-once";
    }
}
