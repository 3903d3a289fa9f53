package dev.settle.runtime.driver;

import org.apache.pulsar.client.api.Message;

/**
 * Tracing as the part in the pipeline's journal slot: a span opened when a delivery enters the path (its outputs and
 * dead letter are its children) and ended once it is settled, saying how, why and which code ran it. Off, the slot
 * holds the journal's no-op and nothing of tracing runs per message.
 */
final class TracingJournal implements Pipeline.Journal {
    private final Tracing tracing;
    private final String subscription;

    private TracingJournal(Tracing tracing, String subscription) {
        this.tracing = tracing;
        this.subscription = subscription;
    }

    /** The journal of {@code tracing}; the no-op journal when tracing is off ({@code tracing} null). */
    static Pipeline.Journal of(Tracing tracing, String subscription) {
        return tracing == null ? Pipeline.Journal.NONE : new TracingJournal(tracing, subscription);
    }

    @Override
    public void started(UnitOfWork<Message<?>> work) {
        work.traced(tracing.start(subscription, work.message(), work.attempt()));
    }

    @Override
    public void settled(InFlight delivery, Settled how, long handlingNanos) {
        UnitOfWork<Message<?>> work = delivery.work();
        work.trace().end(how, work.failure().orElse(null), delivery.port().toString());
    }

    @Override
    public String describe() {
        return "tracing";
    }
}
