package dev.settle.test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/**
 * The logger a function gets from {@code context.getLogger()} on the kit: every line, at every level, is recorded
 * as {@code "LEVEL message"}, and passed on to the logger of the function's class as in the runtime.
 */
final class RecordingLogger extends LegacyAbstractLogger {
    private static final long serialVersionUID = 1L;

    private final transient Logger delegate;
    private final transient List<String> lines = new CopyOnWriteArrayList<>();

    RecordingLogger(Logger delegate) {
        this.delegate = delegate;
        this.name = delegate.getName();
    }

    List<String> lines() {
        return List.copyOf(lines);
    }

    // Every level is enabled, so a function's debug lines are recorded too.
    @Override
    public boolean isTraceEnabled() {
        return true;
    }

    @Override
    public boolean isDebugEnabled() {
        return true;
    }

    @Override
    public boolean isInfoEnabled() {
        return true;
    }

    @Override
    public boolean isWarnEnabled() {
        return true;
    }

    @Override
    public boolean isErrorEnabled() {
        return true;
    }

    @Override
    protected String getFullyQualifiedCallerName() {
        return null;
    }

    @Override
    protected void handleNormalizedLoggingCall(
            Level level, Marker marker, String messagePattern, Object[] arguments, Throwable throwable) {
        String message = MessageFormatter.basicArrayFormat(messagePattern, arguments);
        lines.add(level + " " + message);
        delegate.atLevel(level).setCause(throwable).log(message);
    }
}
