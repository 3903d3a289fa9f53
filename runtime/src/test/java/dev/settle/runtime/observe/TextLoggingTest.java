package dev.settle.runtime.observe;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator.ExecutionStatus;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

class TextLoggingTest {
    @Test
    void logbackFindsItThroughServiceLoader() {
        assertThat(ServiceLoader.load(ch.qos.logback.classic.spi.Configurator.class).stream())
                .anyMatch(provider -> provider.type() == TextLogging.class);
    }

    @Test
    void withNothingForLogbackToFindItSetsUpTheTextLinesAndLogbackLooksNoFurther() {
        LoggerContext context = context();
        Thread thread = Thread.currentThread();
        ClassLoader before = thread.getContextClassLoader();
        // The bootstrap loader alone: neither a logback-test.xml nor a logback.xml.
        thread.setContextClassLoader(new ClassLoader(null) {});
        try {
            assertThat(new TextLogging().configure(context)).isEqualTo(ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY);
        } finally {
            thread.setContextClassLoader(before);
        }

        assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("console"))
                .isNotNull();
        assertThat(context.getLogger("org.apache.pulsar").getLevel()).isEqualTo(Level.WARN);
        assertThat(context.getTurboFilterList()).hasAtLeastOneElementOfType(PulsarClientLogFilter.class);
    }

    @Test
    void aLogbackTestXmlOnTheClassPathIsLeftToLogback() {
        // This module's tests have one (src/test/resources), as an application embedding the runtime may.
        assertThat(Thread.currentThread().getContextClassLoader().getResource("logback-test.xml"))
                .isNotNull();
        LoggerContext context = context();

        assertThat(new TextLogging().configure(context)).isEqualTo(ExecutionStatus.INVOKE_NEXT_IF_ANY);
        assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("console"))
                .isNull();
    }

    @Test
    void theLevelIsSettleLogLevelFromAPropertyThenTheEnvironmentInfoWhenUnset() {
        Map<String, String> debug = Map.of("SETTLE_LOG_LEVEL", "DEBUG");
        Map<String, String> warn = Map.of("SETTLE_LOG_LEVEL", " warn ");
        Map<String, String> none = Map.of();

        assertThat(TextLogging.level(none::get, none::get)).isEqualTo(Level.INFO);
        assertThat(TextLogging.level(debug::get, warn::get)).isEqualTo(Level.DEBUG);
        assertThat(TextLogging.level(none::get, warn::get)).isEqualTo(Level.WARN);
        // As logback reads a level it does not know in its XML configuration (and so in logback-json.xml).
        Map<String, String> unknown = Map.of("SETTLE_LOG_LEVEL", "LOUD");
        assertThat(TextLogging.level(unknown::get, none::get)).isEqualTo(Level.DEBUG);
    }

    @Test
    void settleAndTheRootLogAtTheLevelThePulsarClientAndJettyAtWarn() {
        LoggerContext context = context();
        Map<String, String> debug = Map.of("SETTLE_LOG_LEVEL", "DEBUG");

        TextLogging.configure(context, debug::get, name -> null);

        assertThat(context.getLogger("dev.settle").getLevel()).isEqualTo(Level.DEBUG);
        assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).getLevel()).isEqualTo(Level.DEBUG);
        assertThat(context.getLogger("org.apache.pulsar").getLevel()).isEqualTo(Level.WARN);
        assertThat(context.getLogger("org.eclipse.jetty").getLevel()).isEqualTo(Level.WARN);
        context.stop();
    }

    private static LoggerContext context() {
        LoggerContext context = new LoggerContext();
        context.setMDCAdapter(new LogbackMDCAdapter());
        return context;
    }
}
