package dev.settle.runtime.http;

import java.io.IOException;

/**
 * The client, not the server, failed the exchange: it went silent past a deadline, hung up, or sent a body that is
 * not what its head announced. Logged at debug in one line; any other exception out of a handler is a fault.
 */
final class ClientGoneException extends IOException {
    ClientGoneException(String message) {
        super(message);
    }

    ClientGoneException(IOException cause) {
        super(cause.toString(), cause);
    }
}
