package dev.settle.runtime.driver;

import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * Why a delivery failed, as a value the settlement, the failure log, the metrics and the dead letter read, not only
 * a log line: where it failed and what was thrown there (nothing, for a retry the handler asked for and for an ack
 * timeout).
 *
 * @param stage where the delivery failed
 * @param cause what was thrown (for a refused {@code retryAfter}, a {@link RetryAfterRefusedException} saying why);
 *     null exactly when the stage {@linkplain Stage#hasCause() has none}
 */
public record Failure(Stage stage, Throwable cause) {
    /** Where a delivery failed; {@link #label()} names it in metrics and dead letters. */
    public enum Stage {
        /** The payload could not be decoded for the handler ({@link PayloadDecodeException}). */
        DECODE(true),
        /** The handler or function threw, or completed its outcome exceptionally. */
        HANDLER(true),
        /** An output published for the delivery was not stored ({@link OutputNotDurableException}). */
        OUTPUT(true),
        /**
         * The delivery's transaction (exactly-once) could not be begun, or its acknowledgement or commit failed
         * ({@link TransactionFailedException}): aborted, nothing of it is stored.
         */
        TRANSACTION(true),
        /** The handler returned a {@code retryAfter} the ack timeout would overtake: nacked at once instead. */
        REFUSED_RETRY_AFTER(true),
        /** The handler returned {@code retry()} or {@code retryAfter(d)}: it asked, nothing was thrown. */
        RETRY(false),
        /**
         * The handler returned no outcome and the ack timeout brings the message back: Settle never learns why, and
         * on the last attempt the Pulsar client writes the dead letter itself.
         */
        ACK_TIMEOUT(false),
        /**
         * The call ran past its deadline ({@code handlerTimeout}, or its last {@code extend}): interrupted and settled
         * as a failure ({@link HandlerTimeoutException}), whatever it returns later.
         */
        TIMEOUT(true);

        private final boolean hasCause;
        private final String label;

        Stage(boolean hasCause) {
            this.hasCause = hasCause;
            this.label = name().toLowerCase(Locale.ROOT);
        }

        /** Whether a failure at this stage carries the exception thrown there. */
        public boolean hasCause() {
            return hasCause;
        }

        /** The stage as metrics and dead letters spell it: {@code handler}, {@code refused_retry_after}, ... (as outcomes are spelt) */
        public String label() {
            return label;
        }
    }

    public Failure {
        Objects.requireNonNull(stage, "stage");
        if (stage.hasCause()) {
            Objects.requireNonNull(cause, "cause");
        } else if (cause != null) {
            throw new IllegalArgumentException("a failure at stage " + stage + " has no cause, was given " + cause);
        }
    }

    /** A failure at a stage that has no cause ({@link Stage#RETRY}, {@link Stage#ACK_TIMEOUT}). */
    public static Failure without(Stage stage) {
        return new Failure(stage, null);
    }

    /**
     * What was thrown, as logs, dead letters and spans can read it: itself, or a stand-in when reading its message,
     * text, stack or causes throws ({@link PrintableThrowable}); null for a stage without a cause.
     */
    public Throwable printableCause() {
        return PrintableThrowable.of(cause);
    }

    /** What was thrown; empty for a stage without a cause. */
    public Optional<Throwable> exception() {
        return Optional.ofNullable(cause);
    }

    /** The stage of a failure the port reported by throwing (or completing its outcome with) {@code cause}. */
    static Failure of(Throwable cause) {
        if (cause instanceof PayloadDecodeException) {
            return new Failure(Stage.DECODE, cause);
        } else if (cause instanceof OutputNotDurableException) {
            return new Failure(Stage.OUTPUT, cause);
        } else if (cause instanceof HandlerTimeoutException) {
            return new Failure(Stage.TIMEOUT, cause);
        } else if (cause instanceof TransactionFailedException) {
            return new Failure(Stage.TRANSACTION, cause);
        }
        return new Failure(Stage.HANDLER, cause);
    }
}
