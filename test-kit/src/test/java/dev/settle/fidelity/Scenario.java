package dev.settle.fidelity;

import java.util.List;
import java.util.Map;

/**
 * One fidelity scenario: a subscription (its manifest lines beyond name, topic, jar and config) and the messages
 * published to it, in order.
 *
 * @param name the subscription's name, also its topic's
 * @param settings manifest lines of the subscription, each indented as a key of the subscription
 * @param messages what is published
 */
record Scenario(String name, List<String> settings, List<Message> messages) {
    /** A message: its script for {@link ScriptedHandler}, a key or null, properties. */
    record Message(String script, String key, Map<String, String> properties) {
        /** What is published: the script as UTF-8, or for the script {@code invalid-utf8} bytes that are not. */
        byte[] payload() {
            return script.equals(INVALID_UTF8)
                    ? new byte[] {'i', (byte) 0xc3, '('}
                    : script.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /** A payload a {@code Handler<String>} cannot decode: the handler never sees it, and it is a failure. */
    static final String INVALID_UTF8 = "invalid-utf8";

    static Scenario of(String name, List<String> settings, String... scripts) {
        return new Scenario(
                name,
                settings,
                java.util.Arrays.stream(scripts)
                        .map(script -> new Message(script, null, Map.of()))
                        .toList());
    }

    Scenario keyed(String key, Map<String, String> properties) {
        return new Scenario(
                name,
                settings,
                messages.stream()
                        .map(message -> new Message(message.script(), key, properties))
                        .toList());
    }

    /** A settings line (not written to the manifest): the scenario's output topic refuses every message. */
    static final String REFUSES_OUTPUT = "REFUSES_OUTPUT";

    /** A settings line (not written to the manifest): the handler publishes to the output topic. */
    static final String PUBLISHES = "PUBLISHES";

    /** Whether something may be published to {@code <topic>-out}: a function's output, or a handler's publish. */
    boolean hasOutput() {
        return settings.stream().anyMatch(line -> line.startsWith("output:") || line.equals(PUBLISHES));
    }

    /** Whether a message's script ends by publishing ({@code out}, {@code publish}) to an output that takes it. */
    boolean publishesOnSuccess() {
        return !refusesOutput()
                && messages.stream().anyMatch(message -> message.script().matches(".*[|,](out|publish)$"));
    }

    boolean refusesOutput() {
        return settings.contains(REFUSES_OUTPUT);
    }

    boolean hasDeadLetters() {
        return settings.stream().anyMatch(line -> line.startsWith("deadLetterTopic"));
    }
}
