package dev.settle.sdk;

/**
 * Thrown by a handler when something it calls (a database, a service, a cache) is unavailable, rather than the
 * message being at fault: the runtime counts the failure toward its outage circuit breaker, which pauses receiving
 * and holds the messages in hand, spending none of their attempts, once enough distinct keys fail this way. Any
 * {@code java.io.IOException} or {@code java.util.concurrent.TimeoutException} in a failure's cause chain is read the
 * same way; throw this one (or wrap the client's own exception in it) for a dependency whose client throws anything
 * else.
 *
 * @since 0.4
 */
public class DependencyUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * A dependency named in {@code message} is unavailable.
     *
     * @param message what is unavailable, for the log and the dead letter; may be {@code null}
     * @since 0.4
     */
    public DependencyUnavailableException(String message) {
        super(message);
    }

    /**
     * A dependency named in {@code message} is unavailable, as its client reported with {@code cause}.
     *
     * @param message what is unavailable, for the log and the dead letter; may be {@code null}
     * @param cause what the dependency's client threw; may be {@code null}
     * @since 0.4
     */
    public DependencyUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
