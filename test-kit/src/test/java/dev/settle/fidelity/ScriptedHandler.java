package dev.settle.fidelity;

import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import dev.settle.sdk.Publisher;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The fidelity suite's handler, loaded from a JAR by both the test kit and {@code settle run}: a message
 * {@code tag|ack} or {@code tag|retry,after500,ack} says what to return on its first, second, ... call (the last
 * action repeats): {@code ack}, {@code drop}, {@code retry}, {@code after<millis>} (retryAfter), {@code none}
 * (null), {@code throw}, {@code dropexc} and {@code laterexc} (exceptions the scenarios' {@code onException} maps), or
 * {@code publish} (publishes {@code "<tag> published"} to the topic {@code <first topic>-out} through the SDK, with
 * the message's key and properties, then acks). Each call appends {@code subscription, tag, attempt, action, messageId, key} to the file
 * {@code config.record}, so the two runs can be compared line by line.
 */
public final class ScriptedHandler implements Handler<String> {
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private String subscription;
    private Path record;
    private long sleepMillis;
    private Publisher<String> output;

    @Override
    public void open(HandlerContext context) {
        subscription = context.subscription();
        record = Path.of(context.config().get("record"));
        sleepMillis = Long.parseLong(context.config().getOrDefault("sleepMillis", "0"));
        // Through the SDK, as a handler publishes: the ack waits until the send is stored.
        output = context.publisher(context.topics().get(0) + "-out", String.class);
    }

    @Override
    public Outcome handle(Delivery<String> delivery) throws Exception {
        String[] parts = delivery.value().split("\\|", 2);
        String tag = parts[0];
        String[] script = parts[1].split(",");
        int call = calls.computeIfAbsent(tag, t -> new AtomicInteger()).incrementAndGet();
        String action = script[Math.min(call, script.length) - 1];
        if (sleepMillis > 0) {
            // Deliberately slow when a scenario says so: calls that overlap, or outlast an ack timeout.
            Thread.sleep(sleepMillis);
        }
        write(String.join(
                "\t",
                subscription,
                tag,
                String.valueOf(delivery.attempt()),
                action,
                delivery.messageId(),
                delivery.key().orElse("-")));
        if (action.startsWith("after")) {
            return Outcome.retryAfter(Duration.ofMillis(Long.parseLong(action.substring("after".length()))));
        }
        return switch (action) {
            case "ack" -> Outcome.ack();
            case "drop" -> Outcome.drop();
            case "retry" -> Outcome.retry();
            case "none" -> null;
            case "throw" -> throw new IllegalStateException("scripted failure of " + tag + " on call " + call);
            case "dropexc" -> throw new ScriptedDropException("scripted drop of " + tag);
            case "laterexc" -> throw new ScriptedLaterException("scripted retryAfter of " + tag);
            case "publish" -> {
                output.publish(delivery, tag + " published", delivery.key().orElse(null), delivery.properties());
                yield Outcome.ack();
            }
            default -> throw new IllegalArgumentException("unknown action " + action);
        };
    }

    private synchronized void write(String line) {
        try {
            Files.writeString(
                    record, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
