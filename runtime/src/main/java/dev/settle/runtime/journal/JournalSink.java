package dev.settle.runtime.journal;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Where a {@link JournalWriter} sends its records, already encoded as message bodies: the journal topic ({@link
 * PulsarJournalSink}), or a test's fake. {@link #write} must not block: it is called on the runtime's one timer thread.
 */
interface JournalSink extends AutoCloseable {
    /**
     * Sends {@code batches}, a message each; completes with how many of their records were not stored (0 when all
     * were). Never fails: a sink that cannot write answers with the whole count.
     */
    CompletionStage<Integer> write(List<JournalBatch> batches);

    /**
     * Whether it is still making its first producer (neither made nor failed yet): the writer then keeps its records
     * for a later flush, so a runtime that settles in its first milliseconds loses no record to its own start.
     */
    default boolean starting() {
        return false;
    }

    /** Sends what it holds and lets go of its producer. */
    @Override
    void close();
}
