package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs handler failures with their stack, at most one every {@link LogThrottle#INTERVAL_NANOS} per subscription, and
 * says how many were left out: a handler failing on every message must not flood the log.
 */
final class FailureLog {
    private static final Logger log = LoggerFactory.getLogger("dev.settle.runtime.handler");
    private final String subscription;
    private final LogThrottle throttle;

    FailureLog(String subscription, Time time) {
        this.subscription = subscription;
        this.throttle = new LogThrottle(time);
    }

    /** What failed, as a failure's line names it: the payload's decoding, an output, the transaction, or the call. */
    static String what(Failure failure, HandlerPort port, Object messageId) {
        return switch (failure.stage()) {
            case DECODE -> "decoding the payload";
            case OUTPUT -> "storing an output of message " + messageId;
            case TRANSACTION -> "the transaction of message " + messageId;
            default -> "handler " + port + " on message " + messageId;
        };
    }

    /**
     * Logs one failure, unless one was logged less than {@link LogThrottle#INTERVAL_NANOS} ago.
     *
     * @param why where it failed (named in the line) and what was thrown (logged with its stack)
     * @param deadLetterTopic where the message goes now, when this was its last attempt; empty when it comes back
     */
    void failed(String what, Failure why, int attempt, Optional<String> deadLetterTopic) {
        long left = throttle.admit();
        if (left < 0) {
            return;
        }
        log.error(
                "subscription '{}': {} failed (stage {}) on attempt {}; {}{}",
                subscription,
                what,
                why.stage().label(),
                attempt,
                // The last attempt is not retried: saying so tells a reader why the message is gone from here.
                deadLetterTopic
                        .map(topic -> "that was its last attempt: it goes to the dead-letter topic " + topic)
                        .orElse("it will be retried"),
                left == 0 ? "" : " (" + left + " more failures in the last 10 s not logged)",
                why.printableCause());
    }
}
