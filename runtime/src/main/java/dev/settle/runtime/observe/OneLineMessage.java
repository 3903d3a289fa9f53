package dev.settle.runtime.observe;

import ch.qos.logback.classic.pattern.MessageConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.settle.runtime.manifest.UntrustedText;

/**
 * {@code %oneLineMsg} in {@code logback.xml}: the message with line breaks, ANSI escapes and other control
 * characters written out ({@link UntrustedText}), so that text from outside (a handler's exception message, a
 * package server's answer) cannot forge a log line or recolour a terminal. Never cut.
 */
public final class OneLineMessage extends MessageConverter {
    @Override
    public String convert(ILoggingEvent event) {
        return UntrustedText.escape(super.convert(event), Integer.MAX_VALUE);
    }
}
