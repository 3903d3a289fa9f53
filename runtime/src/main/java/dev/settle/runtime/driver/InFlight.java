package dev.settle.runtime.driver;

import dev.settle.sdk.Outcome;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.Message;

/**
 * One delivery between its call and its settlement: what settling it needs (the unit of work, the ports that ran
 * it, when it started, whom to tell), kept together instead of being passed from method to method. A
 * {@link SettlementStrategy} settles it now ({@link #settle}) or once a stage completes ({@link #settleAfter}).
 * Handed from the thread of the call to the thread that completes its stage, which the stage orders.
 */
final class InFlight {
    /** Settles a delivery; the subscription's {@link Processing}. */
    interface Settler {
        /** Settles {@code delivery} as {@code outcome} says, then gives its call back if it has not been. */
        void settle(InFlight delivery, CompletableFuture<Outcome> outcome);

        /**
         * Gives {@code delivery}'s call back now, counting it as {@code sends} pending sends, and settles it once
         * {@code until}'s stage completes, as {@code then} says from that stage's error (null when there was none).
         */
        void settleAfter(
                InFlight delivery,
                int sends,
                Supplier<CompletableFuture<?>> until,
                Function<Throwable, CompletableFuture<Outcome>> then);
    }

    private final Settler settler;
    private final UnitOfWork<Message<?>> work;
    private final HandlerPort port;
    private final long startedNanos;
    private final Runnable callEnded;
    private final Consumer<Optional<Settled>> done;
    /** Whether the call was given back before the settlement (it waited for its outputs or its commit). */
    private volatile boolean callGivenBack;
    /** Whether its acknowledgement was committed in its transaction already (exactly-once). */
    private volatile boolean committed;

    /**
     * @param port the line of ports that ran the call: a failure names its code, even after a swap
     * @param startedNanos when the call started, on the subscription's clock
     * @param callEnded told once, when the call is over
     * @param done told once, after the settlement: how it was settled, or empty
     */
    InFlight(
            Settler settler,
            UnitOfWork<Message<?>> work,
            HandlerPort port,
            long startedNanos,
            Runnable callEnded,
            Consumer<Optional<Settled>> done) {
        this.settler = settler;
        this.work = work;
        this.port = port;
        this.startedNanos = startedNanos;
        this.callEnded = callEnded;
        this.done = done;
    }

    /** Settles it as {@code outcome} says, now. */
    void settle(CompletableFuture<Outcome> outcome) {
        settler.settle(this, outcome);
    }

    /** Gives the call back now and settles it once {@code until} completes, as {@code then} says (see {@link Settler}). */
    void settleAfter(
            int sends, Supplier<CompletableFuture<?>> until, Function<Throwable, CompletableFuture<Outcome>> then) {
        settler.settleAfter(this, sends, until, then);
    }

    /** Its acknowledgement was committed with its transaction: the consumer has nothing left to do for it. */
    void committed() {
        committed = true;
    }

    boolean isCommitted() {
        return committed;
    }

    /** Gives the call back, once. */
    void endCall() {
        if (!callGivenBack) {
            callGivenBack = true;
            callEnded.run();
        }
    }

    /** Whether the call was given back already. */
    boolean callGivenBack() {
        return callGivenBack;
    }

    UnitOfWork<Message<?>> work() {
        return work;
    }

    HandlerPort port() {
        return port;
    }

    long startedNanos() {
        return startedNanos;
    }

    void done(Optional<Settled> how) {
        done.accept(how);
    }
}
