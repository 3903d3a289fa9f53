package dev.settle.runtime.driver;

/**
 * The code marked the delivery failed without throwing (a Pulsar Function's {@code getCurrentRecord().fail()}): a
 * failure, retried by the failure backoff and capped like any other, and never mapped by {@code onException}.
 */
public final class RecordFailedException extends Exception {
    private static final long serialVersionUID = 1L;

    public RecordFailedException(String message) {
        super(message, null, false, false);
    }
}
