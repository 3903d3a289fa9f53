package dev.settle.examples.orders;

/** A payload that is not an order: no retry can fix it, so the handler drops it. */
final class MalformedOrderException extends Exception {

    private static final long serialVersionUID = 1L;

    MalformedOrderException(String message) {
        super(message);
    }
}
