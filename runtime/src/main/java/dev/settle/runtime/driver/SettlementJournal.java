package dev.settle.runtime.driver;

import org.apache.pulsar.client.api.Message;

/**
 * The settlement journal (docs/trace.md) as a part in the pipeline's journal slot, beside tracing: its record of each
 * settled delivery, made after the settlement is known and, exactly-once, after the delivery's transaction ended. Off
 * ({@code journal: false}), the slot holds no part of it and nothing of the journal runs per message.
 */
final class SettlementJournal implements Pipeline.Journal {
    private final Journal journal;
    /** Read once: off, a call's beginning costs nothing but this field's read. */
    private final boolean perHandling;

    private SettlementJournal(Journal journal) {
        this.journal = journal;
        this.perHandling = journal.perHandling();
    }

    /** The part that tells {@code journal} of each settlement; none when it is {@link Journal#NONE}. */
    static Pipeline.Journal of(Journal journal) {
        return journal == Journal.NONE ? Pipeline.Journal.NONE : new SettlementJournal(journal);
    }

    @Override
    public void called(UnitOfWork<Message<?>> work, HandlerPort port) {
        if (perHandling) {
            journal.handling(work, port.toString());
        }
    }

    @Override
    public void settled(InFlight delivery, Settled how, long handlingNanos) {
        // The settlement was timed at its call's start + handlingNanos (Processing): the journal's record is stamped
        // from that reading, not from another clock read per message.
        journal.settled(
                delivery.work(),
                how,
                delivery.port().toString(),
                handlingNanos,
                delivery.isCommitted(),
                delivery.startedNanos() + handlingNanos);
    }

    @Override
    public String describe() {
        return "settlement journal";
    }
}
