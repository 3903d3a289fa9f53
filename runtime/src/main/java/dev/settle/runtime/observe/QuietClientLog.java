package dev.settle.runtime.observe;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Pulsar client's log held to its errors while a command prints what it read: the log shares the console with the
 * command's output, and the client warns of what such a command does on purpose (a reader's seek makes the broker
 * drop and take back its consumer; a lookup of a topic that does not exist). The command says itself what went wrong.
 * Does nothing when SLF4J is not bound to logback (an operator's own provider keeps its own levels).
 */
public final class QuietClientLog implements AutoCloseable {
    static final String CLIENT = "org.apache.pulsar";

    private final Logger client;
    /** The client logger's own level before, null when it had none (it inherited one): given back on close. */
    private final Level before;

    private QuietClientLog(Logger client, Level before) {
        this.client = client;
        this.before = before;
    }

    /** The client's log below errors off until {@link #close()}. */
    public static QuietClientLog untilClosed() {
        if (!(LoggerFactory.getLogger(CLIENT) instanceof Logger client)) {
            return new QuietClientLog(null, null);
        }
        Level before = client.getLevel();
        client.setLevel(Level.ERROR);
        return new QuietClientLog(client, before);
    }

    @Override
    public void close() {
        if (client != null) {
            client.setLevel(before);
        }
    }
}
