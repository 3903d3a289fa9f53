package dev.settle.runtime.driver;

/** A payload the subscription's schema cannot decode: it takes the failure path (retry, then the cap). */
public final class PayloadDecodeException extends Exception {
    private static final long serialVersionUID = 1L;

    PayloadDecodeException(String message, Throwable cause) {
        super(message, cause);
    }
}
