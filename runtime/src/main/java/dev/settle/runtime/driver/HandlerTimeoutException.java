package dev.settle.runtime.driver;

/**
 * A call ran past its deadline (the subscription's {@code handlerTimeout} from the call's start, or its last
 * {@code Delivery.extend}): interrupted and settled as a failure at stage {@code timeout}. No stack: it is thrown
 * by the lease check, not by the handler, whose stack says nothing of where it hung.
 */
public final class HandlerTimeoutException extends Exception {
    private static final long serialVersionUID = 1L;

    HandlerTimeoutException(String message) {
        super(message, null, false, false);
    }
}
