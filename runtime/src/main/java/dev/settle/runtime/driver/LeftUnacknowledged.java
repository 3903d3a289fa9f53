package dev.settle.runtime.driver;

/**
 * Completes a delivery's pending output when that output will not come and the delivery is to be left
 * unacknowledged, neither acknowledged nor a failure: a windowed function's open window let go of at a stop. The
 * message comes back once the consumer is closed, its redelivery count unchanged (a failure would count toward
 * {@code maxAttempts}).
 */
public final class LeftUnacknowledged extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public LeftUnacknowledged(String why) {
        super(why, null, false, false);
    }
}
