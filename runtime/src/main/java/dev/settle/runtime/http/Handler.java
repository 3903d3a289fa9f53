package dev.settle.runtime.http;

import java.io.IOException;

/** Answers one request; called on a worker thread, possibly on several at once. */
@FunctionalInterface
public interface Handler {
    /**
     * The answer to {@code request}. An exception from reading the request's body (the client went away, stalled, or
     * sent less than it announced) is logged at debug in one line; any other exception is a fault, logged with its
     * stack and answered 500.
     */
    Response handle(Request request) throws IOException;
}
