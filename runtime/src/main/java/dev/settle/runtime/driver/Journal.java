package dev.settle.runtime.driver;

import org.apache.pulsar.client.api.Message;

/**
 * The settlement journal's port (docs/trace.md): told once per settled delivery, after its settlement is known and,
 * exactly-once, after its transaction ended. Implemented by the journal package so the driver knows nothing of how
 * records are written; {@link #NONE} (the default) does nothing. Must never block nor throw: it runs on the message
 * path.
 */
@FunctionalInterface
public interface Journal {
    /** No journal: the subscription's default ({@code journal: false}). */
    Journal NONE = (work, how, code, handlingNanos, committed) -> {};

    /**
     * {@code work} was settled {@code how}.
     *
     * @param code the handler or function that ran the call, and its generation when live code runs
     * @param handlingNanos from the call's start to the settlement
     * @param committed exactly-once: whether the delivery's acknowledgement was committed in its transaction
     */
    void settled(UnitOfWork<Message<?>> work, Settled how, String code, long handlingNanos, boolean committed);

    /**
     * As {@link #settled(UnitOfWork, Settled, String, long, boolean)}, told when: {@code settledNanos} is the reading of
     * the driver's clock ({@code Time.nanoTime()}) the settlement was timed by, which the journal may take its record's
     * time from instead of reading a clock again for each message.
     */
    default void settled(
            UnitOfWork<Message<?>> work,
            Settled how,
            String code,
            long handlingNanos,
            boolean committed,
            long settledNanos) {
        settled(work, how, code, handlingNanos, committed);
    }

    /** Whether it records each handler call as it begins ({@link #handling}) too: {@code journalPerHandling: true}. */
    default boolean perHandling() {
        return false;
    }

    /**
     * {@code code} begins its call on {@code work}; told only when {@link #perHandling()}.
     *
     * @param code the handler or function that runs the call, and its generation when live code runs
     */
    default void handling(UnitOfWork<Message<?>> work, String code) {}
}
