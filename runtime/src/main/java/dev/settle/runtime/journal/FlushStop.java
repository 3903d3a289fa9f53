package dev.settle.runtime.journal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A test-only hook that keeps this process's journal records from the topic once it has made {@code n} of them, the
 * n-th included, as a runtime keeps the records of its last 100 ms when it is SIGKILLed before its next flush:
 * JournalStoryIT then kills the runtime, at a moment a test could not otherwise place inside that window. Off unless
 * the system property {@code settle.test.journalFlushStopsAt} is {@code n}; off, it costs one read of a constant a
 * record.
 */
final class FlushStop {
    static final String PROPERTY = "settle.test.journalFlushStopsAt";

    /** 0: off. */
    private static final long AT = parse(System.getProperty(PROPERTY));

    private static final AtomicLong made = new AtomicLong();
    private static volatile boolean stopped;

    private FlushStop() {}

    /** A record was written into a writer's open body, under its lock. */
    static void offered() {
        if (AT > 0 && made.incrementAndGet() >= AT) {
            stopped = true;
        }
    }

    /** Whether the writers flush nothing more; read under a writer's lock, so the n-th record is never sent. */
    static boolean stopped() {
        return stopped;
    }

    static long parse(String value) {
        if (value == null || value.isBlank()) {
            return 0;
        }
        if (!value.strip().matches("[1-9][0-9]{0,17}")) {
            throw new IllegalArgumentException(
                    "-D" + PROPERTY + " must be a record count of 1 or more, was '" + value + "'");
        }
        return Long.parseLong(value.strip());
    }
}
