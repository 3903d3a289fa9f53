package dev.settle.runtime.cli;

import dev.settle.runtime.publish.BrokerCause;
import java.util.Optional;

/** A Pulsar client's failure in one line, with what to do where the client's words do not say it. */
final class ConnectionProblems {
    private ConnectionProblems() {}

    static String describe(Throwable failure) {
        Optional<String> unreachable = BrokerCause.unreachable(failure);
        if (unreachable.isPresent()) {
            return unreachable.get();
        }
        String message = failure.getMessage() == null ? failure.getClass().getSimpleName() : failure.getMessage();
        int newline = message.indexOf('\n');
        return newline < 0 ? message : message.substring(0, newline);
    }
}
