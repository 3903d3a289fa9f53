package dev.settle.runtime.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.util.LogbackMDCAdapter;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class LogFormatTest {
    @Test
    void anUnknownFormatIsRefusedNamingTheChoices() {
        assertThatThrownBy(() -> LogFormat.apply("xml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("--log-format: must be 'text' or 'json', was 'xml'");
    }

    @Test
    void textLeavesTheConfigurationLogbackChoseAlone() {
        LoggerContext global = (LoggerContext) LoggerFactory.getILoggerFactory();
        Object appender = global.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("console");

        LogFormat.apply("text");

        assertThat(global.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("console"))
                .isSameAs(appender);
    }

    @Test
    void textWritesLineBreaksAndEscapesFromOutsideAsTextSoNoLineCanBeForged() {
        String forged =
                "bad input\n2026-01-01T00:00:00.000Z INFO  [main] d.s.r.Settle - \u001b[32mall is well\u001b[0m";
        List<String> lines = logWith("/logback.xml", context -> {
            context.getLogger("com.acme.OrderHandler").warn("handler said: {}", forged);
            context.getLogger("dev.settle.runtime.driver.FailureLog")
                    .error("a handler failed", new IllegalStateException(forged, new RuntimeException(forged)));
        });

        assertThat(lines.get(0))
                .endsWith("handler said: bad input\\n2026-01-01T00:00:00.000Z INFO  [main] d.s.r.Settle -"
                        + " \\u001b[32mall is well\\u001b[0m");
        assertThat(lines).noneMatch(line -> line.startsWith("2026-01-01T00:00:00.000Z"));
        assertThat(String.join("\n", lines)).doesNotContain("\u001b");
        assertThat(lines.get(2)).startsWith("java.lang.IllegalStateException: bad input\\n2026-01-01");
        assertThat(lines).anyMatch(line -> line.startsWith("Caused by: java.lang.RuntimeException: bad input\\n"));
        assertThat(lines.subList(3, lines.size()))
                .allMatch(
                        line -> line.startsWith("\tat ") || line.startsWith("Caused by: ") || line.startsWith("\t..."));
    }

    @Test
    void jsonWritesOneParsableObjectPerLineWithLevelLoggerAndMessage() {
        List<String> lines = logWith("/logback-json.xml", context -> {
            context.getLogger("dev.settle.runtime.driver.SubscriptionDriver")
                    .info("subscription '{}' stopped: {} held retries abandoned", "orders", 3);
            context.getLogger("com.acme.OrderHandler").warn("a \"quoted\"\nmulti-line message\twith a tab");
        });

        assertThat(lines).hasSize(2).allSatisfy(LogFormatTest::assertJsonObject);
        assertThat(field(lines.get(0), "level")).isEqualTo("INFO");
        assertThat(field(lines.get(0), "loggerName")).isEqualTo("dev.settle.runtime.driver.SubscriptionDriver");
        assertThat(field(lines.get(0), "formattedMessage"))
                .isEqualTo("subscription 'orders' stopped: 3 held retries abandoned");
        assertThat(field(lines.get(0), "message")).isEqualTo("subscription '{}' stopped: {} held retries abandoned");
        assertThat(field(lines.get(1), "level")).isEqualTo("WARN");
        // Still escaped: the quotes, the newline and the tab stay inside the one line.
        assertThat(field(lines.get(1), "formattedMessage"))
                .isEqualTo("a \\\"quoted\\\"\\nmulti-line message\\twith a tab");
    }

    @Test
    void jsonCarriesTheThrowableInsideTheSameLine() {
        Exception failure = new IllegalStateException("boom", new java.io.IOException("disk"));
        List<String> lines = logWith(
                "/logback-json.xml",
                context -> context.getLogger("dev.settle.runtime.handler")
                        .error("handler failed on attempt {}", 2, failure));

        assertThat(lines).hasSize(1).allSatisfy(LogFormatTest::assertJsonObject);
        assertThat(field(lines.get(0), "level")).isEqualTo("ERROR");
        assertThat(field(lines.get(0), "formattedMessage")).isEqualTo("handler failed on attempt 2");
        assertThat(lines.get(0))
                .containsPattern(
                        "\"throwable\":\\{\"className\":\"java.lang.IllegalStateException\",\"message\":\"boom\"")
                .contains("\"className\":\"java.io.IOException\"")
                .contains("LogFormatTest");
    }

    @Test
    void bothFormatsKeepThePulsarClientToWarnings() {
        for (String configuration : List.of("/logback.xml", "/logback-json.xml")) {
            List<String> lines = logWith(configuration, context -> {
                context.getLogger("org.apache.pulsar.client.impl.ConsumerImpl").info("[orders] Subscribed to topic");
                context.getLogger("org.apache.pulsar.client.impl.ClientCnx").warn("connection closed");
                context.getLogger("dev.settle.runtime.cli.RunCommand").info("manifest loaded");
            });

            assertThat(lines).as(configuration).hasSize(2);
            assertThat(lines.get(0)).as(configuration).contains("connection closed");
            assertThat(lines.get(1)).as(configuration).contains("manifest loaded");
        }
    }

    @Test
    void textWritesOneLinePerEventWithTimeLevelThreadAndLogger() {
        List<String> lines = logWith(
                "/logback.xml",
                context -> context.getLogger("dev.settle.runtime.cli.RunCommand")
                        .info("manifest {} loaded", "orders.yaml"));

        assertThat(lines).hasSize(1);
        assertThat(lines.get(0))
                .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d) INFO  \\[[^]]+] "
                        + "dev\\.settle\\.runtime\\.cli\\.RunCommand - manifest orders\\.yaml loaded");
    }

    /**
     * Logs through a context of its own configured from {@code configuration}, never the test run's, and returns
     * what it wrote to stdout line by line.
     */
    private static List<String> logWith(String configuration, Consumer<LoggerContext> logging) {
        LoggerContext context = new LoggerContext();
        // The global context gets one from logback's SLF4J provider; a hand-made one must be given its own.
        context.setMDCAdapter(new LogbackMDCAdapter());
        PrintStream stdout = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        // logback's console target looks System.out up at every write, so swapping it captures the appender.
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            LogFormat.configure(context, LogFormat.class.getResource(configuration));
            logging.accept(context);
        } finally {
            context.stop();
            System.setOut(stdout);
        }
        return captured.toString(StandardCharsets.UTF_8).lines().toList();
    }

    /** The string value of a top-level-or-nested field, still JSON-escaped. */
    private static String field(String json, String name) {
        Matcher value =
                Pattern.compile("\"" + name + "\":\"((?:[^\"\\\\]|\\\\.)*)\"").matcher(json);
        assertThat(value.find()).as("%s has a string field %s", json, name).isTrue();
        return value.group(1);
    }

    /**
     * One JSON object and nothing after it: balanced braces and brackets outside strings, strings closed, only
     * JSON escapes, no raw control characters. Not a full parser; enough to show a log shipper can split on lines.
     */
    private static void assertJsonObject(String line) {
        assertThat(line).startsWith("{").endsWith("}");
        int depth = 0;
        boolean inString = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            assertThat(c).as("raw control character at %d in %s", i, line).isGreaterThanOrEqualTo(' ');
            if (inString) {
                if (c == '\\') {
                    char escaped = line.charAt(++i);
                    assertThat("\"\\/bfnrtu").as("escape at %d in %s", i, line).contains(String.valueOf(escaped));
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
                if (depth == 0) {
                    assertThat(i)
                            .as("the object closes before the end of %s", line)
                            .isEqualTo(line.length() - 1);
                }
            }
        }
        assertThat(inString).as("unterminated string in %s", line).isFalse();
        assertThat(depth).as("unbalanced %s", line).isZero();
    }
}
