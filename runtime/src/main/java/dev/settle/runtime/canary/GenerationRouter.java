package dev.settle.runtime.canary;

import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.MovedToCurrentGeneration;
import dev.settle.runtime.driver.UnitOfWork;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.Outcome;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;

/**
 * The port of a subscription while a canary ramp runs (docs/live-code.md, "Canary ramps"): a message whose key falls
 * in the {@link KeySlice} goes to the canary generation, every other one to the current generation, both loaded at
 * once. With a batch handler each generation's port gathers its own batches: the router hands it single deliveries,
 * routed by key before any batch is formed, so no batch holds messages of two generations. It is swapped in (and
 * out, and replaced at each step) by the driver's swap, which waits for every call on the port before: a key that
 * moves to the other generation has no call left on the one it leaves. With no ramp the
 * subscription runs the current generation's own port: nothing of this is on the message path.
 *
 * <p>A canary call that fails (it throws or its stage fails) is counted against the canary and handed to the current
 * generation at once, in the same delivery: what the settlement sees is the current generation's result, so the
 * canary can never dead-letter a message or hold it for a fix, and its failures never reach the outage breaker. The
 * canary's outcomes ({@code retry}, {@code retryAfter}, none, {@code drop}) are its handler's answer and settle as
 * they say, each counted on its own.
 *
 * <p>At exactly-once (the delivery is in a transaction) a failed canary call that sent nothing is handed on the same
 * way: the transaction holds nothing of the canary. One that sent an output cannot be: its output is in the delivery's
 * transaction, and the fallback's would commit with it. Its delivery ends with {@link MovedToCurrentGeneration}
 * instead (the transaction is aborted, the message negatively acknowledged at once and not counted as a failure), and
 * its message id is kept ({@link MovedMessages}), so its next attempt goes to the current generation: each message's
 * committed outputs are those of one generation.
 *
 * <p>Both sides' calls are counted in their {@link Outcomes} (the fallback call is not: it is the current
 * generation's code on the canary's keys). Thread-safe: immutable but for those counts.
 */
public final class GenerationRouter implements HandlerPort {
    /**
     * One generation of the ramp: its port, its number (each delivery it settles is counted under it in
     * {@code settle_outcomes_total}'s {@code generation} label) and where its calls are counted, kept by the ramp
     * across its routers until a step starts a new window.
     */
    public record Side(HandlerPort port, int generation, Outcomes outcomes) {
        public Side {
            Objects.requireNonNull(port, "port");
            Objects.requireNonNull(outcomes, "outcomes");
            if (generation < 1) {
                throw new IllegalArgumentException("a generation is numbered from 1, was " + generation);
            }
        }
    }

    private final HandlerPort current;
    private final HandlerPort canary;
    private final int currentGeneration;
    private final int canaryGeneration;
    private final KeySlice slice;
    private final Outcomes currentOutcomes;
    private final Outcomes canaryOutcomes;
    private final Time time;
    private final String description;
    private final MovedMessages moved;

    /**
     * @param description names the two generations and the slice in the subscription's listing of its parts
     * @param moved the messages whose canary call failed after sending in their transaction, kept by the ramp across
     *     its routers: their next attempt goes to the current generation
     */
    public GenerationRouter(
            Side current, Side canary, KeySlice slice, Time time, String description, MovedMessages moved) {
        this.current = current.port();
        this.canary = canary.port();
        this.currentGeneration = current.generation();
        this.canaryGeneration = canary.generation();
        this.currentOutcomes = current.outcomes();
        this.canaryOutcomes = canary.outcomes();
        this.moved = Objects.requireNonNull(moved, "moved");
        this.slice = Objects.requireNonNull(slice, "slice");
        this.time = time;
        this.description = description;
    }

    /** The current generation's schema: the consumer's, which every generation of a subscription fits. */
    @Override
    public Schema<?> schema() {
        return current.schema();
    }

    /**
     * A batch handler's: both generations gather their own deliveries ({@code BatchGathering}, one per generation), so
     * a batch holds the keys of one generation only. The same for both: they run the subscription's one shape.
     */
    @Override
    public int deliveriesPerCall() {
        return Math.max(current.deliveriesPerCall(), canary.deliveriesPerCall());
    }

    @Override
    public int waitingForCall() {
        return current.waitingForCall() + canary.waitingForCall();
    }

    @Override
    public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) throws Exception {
        if (slice.contains(work.message()) && !moved.takes(work.message())) {
            return onCanary(work);
        }
        work.handledBy(currentGeneration);
        return counted(current, currentOutcomes, work);
    }

    private CompletionStage<Outcome> onCanary(UnitOfWork<Message<?>> work) throws Exception {
        work.handledBy(canaryGeneration);
        long started = time.nanoTime();
        CompletableFuture<Outcome> outcome;
        try {
            outcome = canary.handle(work).toCompletableFuture();
        } catch (Exception e) {
            canaryOutcomes.failed(time.nanoTime() - started);
            return fallback(work);
        }
        if (outcome.isDone()) {
            // Answered at once (the usual case): the fallback runs on this thread, no stage is chained.
            if (!outcome.isCompletedExceptionally()) {
                canaryOutcomes.returned(outcome.join(), time.nanoTime() - started);
                return outcome;
            }
            canaryOutcomes.failed(time.nanoTime() - started);
            return fallback(work);
        }
        // Completed later (a function's future): the answer, or the fallback's, completes the stage returned here.
        // handle, not whenComplete or thenCompose: those wrap the error for their own future, reading its text.
        CompletableFuture<Outcome> settled = new CompletableFuture<>();
        outcome.handle((answer, error) -> {
            if (error == null) {
                canaryOutcomes.returned(answer, time.nanoTime() - started);
                settled.complete(answer);
                return null;
            }
            canaryOutcomes.failed(time.nanoTime() - started);
            try {
                fallback(work)
                        .toCompletableFuture()
                        .handle((fallback, failed) ->
                                failed == null ? settled.complete(fallback) : settled.completeExceptionally(failed));
            } catch (Exception e) {
                settled.completeExceptionally(e);
            }
            return null;
        });
        return settled;
    }

    /**
     * The current generation's call on a delivery whose canary call failed, in the same delivery; at exactly-once,
     * when the canary sent an output in the delivery's transaction, the delivery ends moved instead and the next
     * attempt is the current generation's.
     */
    private CompletionStage<Outcome> fallback(UnitOfWork<Message<?>> work) throws Exception {
        if (work.transaction().isPresent() && work.sends() > 0) {
            moved.add(work.message());
            return CompletableFuture.failedFuture(new MovedToCurrentGeneration("the canary's call on message "
                    + work.id() + " failed after sending in its transaction: aborted, its next attempt goes to the"
                    + " current generation"));
        }
        // Settled as the current generation answers: counted under its number.
        work.handledBy(currentGeneration);
        return current.handle(work);
    }

    private CompletionStage<Outcome> counted(HandlerPort port, Outcomes outcomes, UnitOfWork<Message<?>> work)
            throws Exception {
        long started = time.nanoTime();
        CompletableFuture<Outcome> outcome;
        try {
            outcome = port.handle(work).toCompletableFuture();
        } catch (Exception e) {
            outcomes.failed(time.nanoTime() - started);
            throw e;
        }
        if (outcome.isDone()) {
            record(outcomes, outcome, started);
            return outcome;
        }
        // Counted on the side; the outcome itself is handed on as it is (whenComplete would wrap its error).
        outcome.handle((answer, error) -> {
            record(outcomes, outcome, started);
            return null;
        });
        return outcome;
    }

    private void record(Outcomes outcomes, CompletableFuture<Outcome> done, long started) {
        long nanos = time.nanoTime() - started;
        if (done.isCompletedExceptionally()) {
            outcomes.failed(nanos);
        } else {
            outcomes.returned(done.join(), nanos);
        }
    }

    /** The slice the canary runs on. */
    public KeySlice slice() {
        return slice;
    }

    @Override
    public String toString() {
        return description;
    }
}
