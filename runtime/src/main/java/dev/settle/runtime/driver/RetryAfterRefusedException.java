package dev.settle.runtime.driver;

/**
 * Why a {@code retryAfter} was refused: its delay was not shorter than what was left of the ack timeout, so the
 * client's ack-timeout timer would have brought the message back first. The message is nacked at once instead.
 */
public final class RetryAfterRefusedException extends Exception {
    private static final long serialVersionUID = 1L;

    RetryAfterRefusedException(String message) {
        super(message, null, false, false);
    }
}
