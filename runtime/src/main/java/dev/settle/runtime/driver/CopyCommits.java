package dev.settle.runtime.driver;

import java.util.Objects;

/**
 * How a copy that settles its original (a dead letter, a held copy, a delay copy) is written under the subscription's
 * guarantee, chosen once: as it is, the settlement then acknowledging the original ({@link #acknowledged}); or in a
 * transaction of its own together with the original's acknowledgement ({@link #committed}, exactly-once), so that a
 * crash or a failure between the two never does one without the other. A transaction of its own, not the failed
 * attempt's: that one is aborted, so that none of the attempt's outputs is ever read, and the copy and the
 * acknowledgement must not go down with them. {@link DeadLettering} and {@link DelayCopies} write through it: one rule
 * for every such copy.
 *
 * @param <M> the message type the consumer calls take ({@code Message<?>} on a real consumer)
 */
final class CopyCommits<M> {
    @SuppressWarnings("rawtypes")
    private static final CopyCommits ACKNOWLEDGED = new CopyCommits<>(null);

    /** The transaction each copy commits in with its original's acknowledgement; null when written as it is. */
    private final DeadLettering.LetterCommits<M> commits;

    private CopyCommits(DeadLettering.LetterCommits<M> commits) {
        this.commits = commits;
    }

    /** At-least-once: each copy is written as it is, and its original acknowledged once it is stored. */
    @SuppressWarnings("unchecked")
    static <M> CopyCommits<M> acknowledged() {
        return (CopyCommits<M>) ACKNOWLEDGED;
    }

    /** Exactly-once: each copy is written through {@code commits}, with its original's acknowledgement. */
    static <M> CopyCommits<M> committed(DeadLettering.LetterCommits<M> commits) {
        return new CopyCommits<>(Objects.requireNonNull(commits, "commits"));
    }

    /** {@code to}, each letter written as this says. */
    DeadLetterWriter<M> letters(DeadLetterWriter<M> to) {
        return commits == null
                ? to
                : (work, properties) -> commits.commit(work, inTransaction -> to.write(inTransaction, properties));
    }

    /** {@code to}, each delay copy written as this says. */
    DelayWriter<M> delays(DelayWriter<M> to) {
        return commits == null
                ? to
                : (work, properties, at) ->
                        commits.commit(work, inTransaction -> to.write(inTransaction, properties, at));
    }

    /** What a stored copy leaves the settlement to do: acknowledge the original, or nothing (committed with it). */
    DeadLettering.Stored whenStored() {
        return commits == null ? DeadLettering.Stored.STORED : DeadLettering.Stored.COMMITTED;
    }

    /**
     * Whether a copy that failed with {@code error} was discarded with its transaction because the broker refused the
     * original's acknowledgement in it as a conflict (issue 41): another copy of the message settled it or holds it in
     * its own transaction, so the original is left alone.
     */
    boolean leftToItsTwin(Throwable error) {
        return commits != null && CommitStage.refusedAsConflict(error);
    }
}
