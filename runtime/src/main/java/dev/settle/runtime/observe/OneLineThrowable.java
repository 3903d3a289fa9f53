package dev.settle.runtime.observe;

import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import dev.settle.runtime.manifest.UntrustedText;
import java.util.Arrays;

/**
 * {@code %oneLineEx} in {@code logback.xml}: the stack trace as usual, one line per frame, but each exception's
 * message (a handler's, a library's: text from outside) on one line with its control characters written out, so that
 * a message holding {@code "\n01:00:00 INFO ..."} cannot forge a line of its own.
 */
public final class OneLineThrowable extends ThrowableProxyConverter {
    @Override
    protected String throwableProxyToString(IThrowableProxy proxy) {
        return super.throwableProxyToString(escaped(proxy));
    }

    private static IThrowableProxy escaped(IThrowableProxy proxy) {
        return proxy == null ? null : new Escaped(proxy);
    }

    /** The same exception, its message escaped, its causes and suppressed ones too. */
    private record Escaped(IThrowableProxy original) implements IThrowableProxy {
        @Override
        public String getMessage() {
            String message = original.getMessage();
            return message == null ? null : UntrustedText.escape(message, Integer.MAX_VALUE);
        }

        @Override
        public String getOverridingMessage() {
            String message = original.getOverridingMessage();
            return message == null ? null : UntrustedText.escape(message, Integer.MAX_VALUE);
        }

        @Override
        public String getClassName() {
            return original.getClassName();
        }

        @Override
        public StackTraceElementProxy[] getStackTraceElementProxyArray() {
            return original.getStackTraceElementProxyArray();
        }

        @Override
        public int getCommonFrames() {
            return original.getCommonFrames();
        }

        @Override
        public IThrowableProxy getCause() {
            return escaped(original.getCause());
        }

        @Override
        public IThrowableProxy[] getSuppressed() {
            IThrowableProxy[] suppressed = original.getSuppressed();
            return suppressed == null
                    ? null
                    : Arrays.stream(suppressed).map(OneLineThrowable::escaped).toArray(IThrowableProxy[]::new);
        }

        @Override
        public boolean isCyclic() {
            return original.isCyclic();
        }
    }
}
