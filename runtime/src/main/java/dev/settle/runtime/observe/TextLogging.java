package dev.settle.runtime.observe;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.util.ContextInitializer;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import java.util.function.Function;

/**
 * The runtime's default logging, set up in code when logback starts (logback finds it through {@code ServiceLoader}):
 * one line per event on stdout, {@code dev.settle} and handlers at {@code SETTLE_LOG_LEVEL} (environment variable or
 * system property, INFO when unset), the Pulsar client and Jetty at WARN, the Pulsar client's repeated warnings
 * thinned ({@link PulsarClientLogFilter}). {@code logback-json.xml}, the JSON format, has the same loggers and levels.
 *
 * <p>In code rather than a bundled {@code logback.xml}: reading an XML configuration loads logback's configuration
 * model and the JDK's XML parser, some 800 classes, about a sixth of what {@code settle run} loads before its first
 * message. Logback's own search decides instead when there is anything for it to find: an operator's
 * {@code -Dlogback.configurationFile}, or a {@code logback-test.xml} or {@code logback.xml} on the class path (a
 * test's, or an application's that embeds the runtime).
 */
public final class TextLogging extends ContextAwareBase implements Configurator {
    /** What every line holds; {@code %oneLineMsg} and {@code %oneLineEx} keep text from outside on its one line. */
    static final String PATTERN =
            "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %oneLineMsg%n%oneLineEx";

    /** Called by logback's {@code ServiceLoader}. */
    public TextLogging() {}

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        if (System.getProperty(ContextInitializer.CONFIG_FILE_PROPERTY) != null
                || onClassPath("logback-test.xml")
                || onClassPath("logback.xml")) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        configure(context, System::getProperty, System::getenv);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }

    /**
     * Sets {@code context} up for text lines on stdout, the level read from {@code properties}, then from
     * {@code environment}.
     */
    static void configure(
            LoggerContext context, Function<String, String> properties, Function<String, String> environment) {
        PulsarClientLogFilter pulsarClient = new PulsarClientLogFilter();
        pulsarClient.setContext(context);
        pulsarClient.start();
        context.addTurboFilter(pulsarClient);

        PatternLayout layout = new PatternLayout();
        layout.setContext(context);
        layout.setPattern(PATTERN);
        layout.getInstanceConverterMap().put("oneLineMsg", OneLineMessage::new);
        layout.getInstanceConverterMap().put("oneLineEx", OneLineThrowable::new);
        layout.start();
        LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
        encoder.setContext(context);
        encoder.setLayout(layout);
        encoder.start();
        ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
        console.setContext(context);
        console.setName("console");
        console.setEncoder(encoder);
        console.start();

        Level level = level(properties, environment);
        context.getLogger("dev.settle").setLevel(level);
        // The Pulsar client logs every connection and lookup at INFO; Jetty its version and each start.
        context.getLogger("org.apache.pulsar").setLevel(Level.WARN);
        context.getLogger("org.eclipse.jetty").setLevel(Level.WARN);
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(level);
        root.addAppender(console);
    }

    /**
     * {@code SETTLE_LOG_LEVEL}, as logback reads a level in its XML configuration (and so in {@code logback-json.xml}):
     * INFO when unset, DEBUG for a name it does not know.
     */
    static Level level(Function<String, String> properties, Function<String, String> environment) {
        String value = properties.apply("SETTLE_LOG_LEVEL");
        if (value == null) {
            value = environment.apply("SETTLE_LOG_LEVEL");
        }
        return value == null ? Level.INFO : Level.toLevel(value.trim());
    }

    private static boolean onClassPath(String resource) {
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        if (loader == null) {
            loader = TextLogging.class.getClassLoader();
        }
        return loader.getResource(resource) != null;
    }
}
