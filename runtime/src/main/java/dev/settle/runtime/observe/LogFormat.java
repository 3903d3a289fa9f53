package dev.settle.runtime.observe;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import ch.qos.logback.core.status.Status;
import java.net.URL;
import java.util.Locale;
import java.util.stream.Collectors;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * The {@code --log-format} of {@code settle run}: {@code text} (the default, {@code logback.xml}) or {@code json}
 * (one JSON object per line, {@code logback-json.xml}, for log shippers).
 */
public final class LogFormat {
    static final String JSON_CONFIGURATION = "/logback-json.xml";

    private LogFormat() {}

    /**
     * Switches the runtime's logging to {@code format}. {@code text} leaves the configuration logback chose at
     * start-up alone (the bundled {@code logback.xml}, or the operator's {@code -Dlogback.configurationFile});
     * {@code json} replaces it with {@code logback-json.xml}, same loggers and levels.
     *
     * @throws IllegalArgumentException when {@code format} is neither {@code text} nor {@code json}
     * @throws IllegalStateException when SLF4J is not bound to logback, or the JSON configuration fails
     */
    public static void apply(String format) {
        String chosen = format == null ? "" : format.trim().toLowerCase(Locale.ROOT);
        if (chosen.equals("text")) {
            return;
        }
        if (!chosen.equals("json")) {
            throw new IllegalArgumentException("--log-format: must be 'text' or 'json', was '" + format + "'");
        }
        ILoggerFactory factory = LoggerFactory.getILoggerFactory();
        if (!(factory instanceof LoggerContext)) {
            throw new IllegalStateException("--log-format json needs logback as the SLF4J provider, found "
                    + factory.getClass().getName() + "; configure that provider for JSON instead");
        }
        configure((LoggerContext) factory, LogFormat.class.getResource(JSON_CONFIGURATION));
    }

    /** Replaces {@code context}'s configuration with the one at {@code configuration}. */
    static void configure(LoggerContext context, URL configuration) {
        if (configuration == null) {
            throw new IllegalStateException("logback-json.xml is missing from the runtime's class path");
        }
        long since = System.currentTimeMillis();
        JoranConfigurator configurator = new JoranConfigurator();
        configurator.setContext(context);
        context.reset();
        try {
            configurator.doConfigure(configuration);
        } catch (JoranException e) {
            throw new IllegalStateException(
                    "configuring logback from " + configuration + " failed: " + e.getMessage(), e);
        }
        // Joran reports most mistakes as error statuses rather than exceptions: surface them.
        String errors = context.getStatusManager().getCopyOfStatusList().stream()
                .filter(status -> status.getLevel() == Status.ERROR && status.getTimestamp() >= since)
                .map(Status::getMessage)
                .collect(Collectors.joining("; "));
        if (!errors.isEmpty()) {
            throw new IllegalStateException("configuring logback from " + configuration + " failed: " + errors);
        }
    }
}
