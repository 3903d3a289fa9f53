package dev.settle.runtime.driver;

import dev.settle.runtime.deadletter.HeldBy;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * What becomes of a delivery past the cap whose letter Settle writes (the manifest's {@code onCap}), chosen once when
 * the subscription starts: {@link #deadLetter()} sends every one to the dead-letter topic, the contract of
 * docs/design.md section 1; {@code onCap: hold} ({@link HeldForFix}) sends it to the held topic instead, until another
 * generation of the code serves every key ({@link #servedByAll}). {@link DeadLettering} writes either copy the same way
 * (in its own transaction with the original's acknowledgement at exactly-once), so the settlement does not change.
 *
 * @param <M> the message type the consumer calls take ({@code Message<?>} on a real consumer)
 */
public interface OnCap<M> {
    /** {@code onCap: deadLetter}: every letter goes to the dead-letter topic; nothing is held. */
    @SuppressWarnings("unchecked")
    static <M> OnCap<M> deadLetter() {
        return (OnCap<M>) DeadLetterOnly.INSTANCE;
    }

    /** Whether {@code work}, on its last attempt, goes to the held topic rather than the dead-letter topic. */
    default boolean holds(UnitOfWork<M> work) {
        return false;
    }

    /** The held topic; only asked when {@link #holds} said so. */
    default String topic() {
        return "";
    }

    /** What a held copy of {@code work} carries besides a dead letter's properties: the code that holds it. */
    default Map<String, String> tags(UnitOfWork<M> work) {
        return Map.of();
    }

    /** Writes held copies to the held topic, as {@link DeadLetterWriter} writes letters to the dead-letter topic. */
    default DeadLetterWriter<M> writer() {
        return (work, properties) -> CompletableFuture.failedFuture(
                new IllegalStateException("onCap: deadLetter holds nothing; the letter goes to the dead-letter topic"));
    }

    /** {@code work}'s held copy is stored. */
    default void held(UnitOfWork<M> work) {}

    /**
     * {@code code} now serves every key of the subscription (an upload, a reload, a fleet record, a restart): the
     * messages older code held go back to their topic, to be handled by it. The one trigger of a re-drive; a canary
     * slice, which serves only some keys, does not call it.
     */
    default void servedByAll(HeldBy code) {}

    /** What this does past the cap, for the pipeline's listing; empty for the dead letters alone. */
    default String describe() {
        return "";
    }

    /** The subscription stops: a re-drive running now ends (what it did not send waits for the next). */
    default void close() {}

    /** {@code onCap: deadLetter}. */
    final class DeadLetterOnly<M> implements OnCap<M> {
        private static final DeadLetterOnly<?> INSTANCE = new DeadLetterOnly<>();

        private DeadLetterOnly() {}
    }
}
