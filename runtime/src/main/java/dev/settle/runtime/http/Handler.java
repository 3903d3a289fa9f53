package dev.settle.runtime.http;

import java.io.IOException;

/** Answers one request; called on a worker thread, possibly on several at once. */
@FunctionalInterface
public interface Handler {
    /**
     * The answer to {@code request}. An {@link IOException} means the client went away (logged at debug); any other
     * exception is a fault, logged with its stack and answered 500 when the answer has not begun.
     */
    Response handle(Request request) throws IOException;
}
