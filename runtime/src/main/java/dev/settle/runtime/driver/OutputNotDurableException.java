package dev.settle.runtime.driver;

/**
 * A message published while handling a delivery (a function's return value, a {@code context.publish}, a
 * handler's publisher) was not stored by the broker: the delivery is a failure, retried by the failure backoff
 * and capped like any other, and never mapped by {@code onException}.
 */
public final class OutputNotDurableException extends Exception {
    private static final long serialVersionUID = 1L;

    public OutputNotDurableException(String message, Throwable cause) {
        super(message, cause);
    }
}
