package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.BreakerSettings;
import dev.settle.sdk.DependencyUnavailableException;
import java.io.IOException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * Tells a dependency's failure (an outage of what the handler calls) from any other (a poison message, a bug), for
 * the outage circuit breaker: only the first may open it. A dependency's failure has, anywhere in its cause chain, an
 * {@link IOException} (every {@code java.net} exception and every Pulsar client exception is one, so a failed output
 * send is), a {@link TimeoutException}, the SDK's {@link DependencyUnavailableException}, or a class the
 * subscription's {@code breaker.exceptions} names (or a subclass of one). A payload that cannot be decoded is never
 * one, whatever the decoder threw (Jackson's exceptions are {@link IOException}s): it is the message's fault; nor is
 * the broker refusing a transaction's acknowledgement as a conflict (the input is settled, or being settled, by
 * another copy: the broker answered). A pure
 * function of the failure; thread-safe.
 */
final class FailureCauses {
    /** Deep enough for any wrapping seen in practice; a longer chain is read no further. */
    private static final int MAX_DEPTH = 32;

    private final List<String> named;

    FailureCauses(List<String> named) {
        this.named = List.copyOf(named);
    }

    static FailureCauses of(BreakerSettings settings) {
        return new FailureCauses(settings.exceptions());
    }

    /** Whether {@code failure} names a dependency's outage. */
    boolean isDependency(Failure failure) {
        if (failure.stage() == Failure.Stage.DECODE || !failure.stage().hasCause()) {
            return false;
        }
        return isDependency(failure.cause());
    }

    /** Whether {@code thrown} or any of its causes (or suppressed-free chain, cycles cut) names a dependency. */
    boolean isDependency(Throwable thrown) {
        if (CommitStage.refusedAsConflict(thrown)) {
            // The broker answered: the input is acknowledged already, or held by another copy's transaction.
            return false;
        }
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        Throwable e = thrown;
        for (int depth = 0; e != null && depth < MAX_DEPTH && seen.add(e); depth++) {
            if (e instanceof IOException
                    || e instanceof TimeoutException
                    || e instanceof DependencyUnavailableException
                    || isNamed(e.getClass())) {
                return true;
            }
            e = causeOf(e);
        }
        return false;
    }

    private boolean isNamed(Class<?> type) {
        if (named.isEmpty()) {
            return false;
        }
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (named.contains(c.getName())) {
                return true;
            }
        }
        return false;
    }

    /** A handler's exception whose {@code getCause} throws has no readable cause: the walk stops there. */
    private static Throwable causeOf(Throwable e) {
        try {
            return e.getCause();
        } catch (RuntimeException unreadable) {
            return null;
        }
    }
}
