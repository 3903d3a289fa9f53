package dev.settle.runtime.driver;

import java.util.Objects;

/**
 * Why a delivery failed, as a value the settlement (and later a dead letter) can read, not only a log line: where
 * it failed and what was thrown there.
 *
 * @param stage where the delivery failed
 * @param cause what was thrown (for a refused {@code retryAfter}, a {@link RetryAfterRefusedException} saying why)
 */
public record Failure(Stage stage, Throwable cause) {
    /** Where a delivery failed. */
    public enum Stage {
        /** The payload could not be decoded for the handler ({@link PayloadDecodeException}). */
        DECODE,
        /** The handler or function threw, or completed its outcome exceptionally. */
        HANDLER,
        /** An output published for the delivery was not stored ({@link OutputNotDurableException}). */
        OUTPUT,
        /**
         * The delivery's transaction (exactly-once) could not be begun, or its acknowledgement or commit failed
         * ({@link TransactionFailedException}): aborted, nothing of it is stored.
         */
        TRANSACTION,
        /** The handler returned a {@code retryAfter} the ack timeout would overtake: nacked at once instead. */
        REFUSED_RETRY_AFTER
    }

    public Failure {
        Objects.requireNonNull(stage, "stage");
        Objects.requireNonNull(cause, "cause");
    }

    /** The stage of a failure the port reported by throwing (or completing its outcome with) {@code cause}. */
    static Failure of(Throwable cause) {
        if (cause instanceof PayloadDecodeException) {
            return new Failure(Stage.DECODE, cause);
        } else if (cause instanceof OutputNotDurableException) {
            return new Failure(Stage.OUTPUT, cause);
        } else if (cause instanceof TransactionFailedException) {
            return new Failure(Stage.TRANSACTION, cause);
        }
        return new Failure(Stage.HANDLER, cause);
    }
}
