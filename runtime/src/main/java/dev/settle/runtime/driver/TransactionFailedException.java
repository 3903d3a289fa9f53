package dev.settle.runtime.driver;

/**
 * An exactly-once delivery's transaction could not be begun, or its acknowledgement or commit failed: the
 * transaction is aborted (its outputs discarded) and the input comes back after the failure backoff.
 */
public final class TransactionFailedException extends Exception {
    private static final long serialVersionUID = 1L;

    TransactionFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
