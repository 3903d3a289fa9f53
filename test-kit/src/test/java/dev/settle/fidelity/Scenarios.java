package dev.settle.fidelity;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The scenarios the fidelity suite runs on the test kit and on the real broker. Each is chosen to have one
 * result whatever the timing of a real run: per message, the same (action, attempt) sequence and the same dead
 * letters, and the same outputs (value, key, properties) for those that publish.
 */
final class Scenarios {
    private Scenarios() {}

    private static final String DLQ = "deadLetterTopic: persistent://public/default/${RUN}-%s-dlq";

    private static final String FUNCTION = "function: " + ScriptedFunction.class.getName();

    private static String output(String name) {
        return "output: persistent://public/default/${RUN}-" + name + "-out";
    }

    private static String onException(Class<?> type, String outcome) {
        return "onException: [{type: " + type.getName() + ", outcome: " + outcome + "}]";
    }

    private static List<String> capped(String name, int maxAttempts, String... more) {
        List<String> lines = new ArrayList<>(List.of("maxAttempts: " + maxAttempts, DLQ.formatted(name)));
        lines.addAll(List.of(more));
        return lines;
    }

    static List<Scenario> all() {
        Map<String, String> props = Map.of("origin", "fidelity", "trace", "t-1");
        List<Scenario> scenarios = new ArrayList<>(List.of(
                Scenario.of("ack", List.of(), "m|ack"),
                Scenario.of("drop", List.of(), "m|drop"),
                Scenario.of("retry-then-ack", List.of(), "m|retry,ack"),
                Scenario.of("shared-retry-cap", capped("shared-retry-cap", 3), "m|retry")
                        .keyed("k-1", props),
                Scenario.of("key-shared-retry-cap", capped("key-shared-retry-cap", 3, "type: Key_Shared"), "m|retry")
                        .keyed("k-2", props),
                Scenario.of("retry-after-then-ack", List.of(), "m|after500,ack"),
                Scenario.of("retry-after-cap", capped("retry-after-cap", 3), "m|after300"),
                Scenario.of("retry-after-under-ack-timeout", List.of("ackTimeout: 2s"), "m|after500,after500,ack"),
                Scenario.of("refused-then-ack", List.of("ackTimeout: 1s"), "m|after2000,ack"),
                Scenario.of("refused-cap", capped("refused-cap", 2, "ackTimeout: 1s"), "m|after1500"),
                Scenario.of(
                        "failure-backoff-cap",
                        capped("failure-backoff-cap", 3, "failureBackoff: {initial: 200ms, multiplier: 2, max: 1s}"),
                        "m|throw"),
                Scenario.of("failure-default-backoff-then-ack", List.of(), "m|throw,throw,ack"),
                Scenario.of(
                        "failure-backoff-none-cap",
                        capped("failure-backoff-none-cap", 3, "failureBackoff: none"),
                        "m|throw"),
                Scenario.of(
                        "failure-backoff-capped-by-ack-timeout",
                        List.of("ackTimeout: 1s", "failureBackoff: {initial: 5s, multiplier: 2, max: 10s}"),
                        "m|throw,ack"),
                Scenario.of("none-ack-timeout-cap", capped("none-ack-timeout-cap", 3, "ackTimeout: 1s"), "m|none"),
                Scenario.of("none-then-ack", List.of("ackTimeout: 1s"), "m|none,ack"),
                Scenario.of("none-without-ack-timeout", List.of(), "m|none"),
                Scenario.of(
                                "undecodable-payload-cap",
                                capped("undecodable-payload-cap", 2, "failureBackoff: none"),
                                Scenario.INVALID_UTF8)
                        .keyed("bad", Map.of("origin", "fidelity")),
                Scenario.of("drop-on-last-attempt", capped("drop-on-last-attempt", 3), "m|retry,retry,drop"),
                Scenario.of("exclusive-retries-without-a-count", List.of("type: Exclusive"), "m|retry,retry,ack"),
                Scenario.of(
                        "failover-failure-without-a-count",
                        List.of("type: Failover", "failureBackoff: {initial: 100ms, multiplier: 2, max: 1s}"),
                        "m|throw,ack"),
                Scenario.of(
                        "exclusive-nack-rewinds-the-unacknowledged",
                        List.of("type: Exclusive"),
                        "a|none",
                        "b|retry,ack"),
                Scenario.of(
                                "key-shared-throw-then-ack",
                                List.of("type: Key_Shared", "failureBackoff: {initial: 100ms, multiplier: 2, max: 1s}"),
                                "m|throw,ack")
                        .keyed("k-3", Map.of()),
                Scenario.of(
                        "concurrency-mixed",
                        List.of("concurrency: 3"),
                        "a|retry,ack",
                        "b|throw,ack",
                        "c|after300,ack",
                        "d|drop",
                        "e|ack")));
        // What Pulsar Functions, onException and publish-then-ack added.
        scenarios.addAll(List.of(
                Scenario.of(
                        "handler-on-exception-drop",
                        List.of(onException(ScriptedDropException.class, "drop")),
                        "m|dropexc"),
                Scenario.of(
                        "handler-on-exception-retry-after",
                        List.of(onException(ScriptedLaterException.class, "retryAfter 300ms")),
                        "m|laterexc,ack"),
                Scenario.of("handler-publishes", List.of(Scenario.PUBLISHES), "m|publish")
                        .keyed("k-4", props),
                Scenario.of("function-output", List.of(FUNCTION, output("function-output")), "m|out")
                        .keyed("k-5", props),
                Scenario.of("function-null", List.of(FUNCTION, output("function-null")), "m|null"),
                Scenario.of(
                                "function-throw-dead-letter",
                                capped("function-throw-dead-letter", 3, FUNCTION, "failureBackoff: none"),
                                "m|throw")
                        .keyed("k-6", props),
                Scenario.of(
                        "function-on-exception-drop",
                        List.of(FUNCTION, onException(ScriptedDropException.class, "drop")),
                        "m|dropexc"),
                Scenario.of(
                        "function-on-exception-retry-after",
                        List.of(
                                FUNCTION,
                                output("function-on-exception-retry-after"),
                                onException(ScriptedLaterException.class, "retryAfter 300ms")),
                        "m|laterexc,out"),
                Scenario.of(
                        "function-output-refused-dead-letter",
                        capped(
                                "function-output-refused-dead-letter",
                                2,
                                FUNCTION,
                                output("function-output-refused-dead-letter"),
                                "failureBackoff: none",
                                Scenario.REFUSES_OUTPUT),
                        "m|out")));
        List<Scenario.Message> ordered = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            for (String key : List.of("x", "y", "z")) {
                ordered.add(new Scenario.Message(key + i + "|ack", key, Map.of()));
            }
        }
        scenarios.add(new Scenario(
                "key-order-with-concurrency", List.of("type: Key_Shared", "concurrency: 4", "SLEEP 20"), ordered));
        return scenarios;
    }
}
