package dev.settle.runtime.driver;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

/**
 * A stand-in for a handler's exception that cannot be printed: its {@code getMessage()}, {@code toString()},
 * {@code getCause()}, {@code getStackTrace()} or {@code getSuppressed()} throws. Joining a future that failed with it,
 * logging it, writing it into a dead letter or recording it on a span reads these; one that threw there escaped the
 * settlement (issue 41: the message was never settled, and the thread that settled it died). The stand-in says what
 * was thrown and keeps what could be read: the class, the stack, the causes.
 */
final class PrintableThrowable extends RuntimeException {
    private static final long serialVersionUID = 1L;
    /** Causes and suppressed exceptions looked at, at most: a chain built to be endless is not followed. */
    private static final int MOST_LOOKED_AT = 64;

    /** The class of what was thrown. */
    private final String thrownClass;

    private PrintableThrowable(String thrownClass, String message) {
        super(message, null, true, true);
        this.thrownClass = thrownClass;
    }

    /** The class of {@code thrown}, or of what a stand-in stands for. */
    static String classOf(Throwable thrown) {
        return thrown instanceof PrintableThrowable standIn
                ? standIn.thrownClass
                : thrown.getClass().getName();
    }

    /** Printed as what was thrown: its class, then its message or what reading it threw. */
    @Override
    public String toString() {
        return getMessage();
    }

    /** {@code thrown} itself when all of it reads without throwing; else a stand-in that does. */
    static Throwable of(Throwable thrown) {
        if (thrown == null || readable(thrown)) {
            return thrown;
        }
        return standIn(thrown, 0);
    }

    /** What {@code thrown} says of itself ({@code getMessage()}), or what it threw when asked. */
    static String messageOf(Throwable thrown) {
        try {
            return thrown.getMessage();
        } catch (Throwable e) {
            return "(its getMessage() threw " + e.getClass().getName() + ")";
        }
    }

    private static boolean readable(Throwable thrown) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        try {
            return readable(thrown, seen);
        } catch (Throwable unreadable) {
            return false;
        }
    }

    private static boolean readable(Throwable thrown, Set<Throwable> seen) {
        if (thrown == null || !seen.add(thrown)) {
            return true;
        }
        if (seen.size() > MOST_LOOKED_AT) {
            return false;
        }
        thrown.getMessage();
        thrown.getLocalizedMessage();
        thrown.toString();
        thrown.getStackTrace();
        for (Throwable suppressed : thrown.getSuppressed()) {
            if (!readable(suppressed, seen)) {
                return false;
            }
        }
        return readable(thrown.getCause(), seen);
    }

    private static Throwable standIn(Throwable thrown, int depth) {
        String thrownClass = thrown.getClass().getName();
        String message;
        try {
            message = thrown.getMessage();
            message = message == null ? thrownClass : thrownClass + ": " + message;
        } catch (Throwable e) {
            message = thrownClass + " (its getMessage() threw " + e.getClass().getName() + ")";
        }
        PrintableThrowable standIn = new PrintableThrowable(thrownClass, message);
        try {
            standIn.setStackTrace(thrown.getStackTrace());
        } catch (Throwable e) {
            standIn.setStackTrace(new StackTraceElement[0]);
        }
        if (depth < MOST_LOOKED_AT) {
            try {
                Throwable cause = thrown.getCause();
                if (cause != null && cause != thrown) {
                    standIn.initCause(readable(cause) ? cause : standIn(cause, depth + 1));
                }
            } catch (Throwable e) {
                // The cause cannot be had: the stand-in says what it can without it.
            }
        }
        return standIn;
    }
}
