package dev.settle.fidelity;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.functions.api.Context;
import org.apache.pulsar.functions.api.Function;

/**
 * The fidelity suite's Pulsar Function, loaded from the same JAR as {@link ScriptedHandler} and scripted the same
 * way: {@code out} returns {@code "<tag> out"} (published to {@code output}), {@code null} returns null,
 * {@code throw} throws, {@code dropexc} and {@code laterexc} throw what the scenarios' {@code onException} maps.
 * Each call appends the same line as the handler's to the file {@code config.record}.
 */
public final class ScriptedFunction implements Function<String, String> {
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    @Override
    public String process(String input, Context context) {
        String[] parts = input.split("\\|", 2);
        String tag = parts[0];
        String[] script = parts[1].split(",");
        int call = calls.computeIfAbsent(tag, t -> new AtomicInteger()).incrementAndGet();
        String action = script[Math.min(call, script.length) - 1];
        Message<?> message = context.getCurrentRecord().getMessage().orElseThrow();
        write(
                Path.of(String.valueOf(context.getUserConfigValue("record").orElseThrow())),
                String.join(
                        "\t",
                        context.getFunctionName(),
                        tag,
                        String.valueOf(message.getRedeliveryCount() + 1),
                        action,
                        message.getMessageId().toString(),
                        message.hasKey() ? message.getKey() : "-"));
        return switch (action) {
            case "out" -> tag + " out";
            case "null" -> null;
            case "throw" -> throw new IllegalStateException("scripted failure of " + tag + " on call " + call);
            case "dropexc" -> throw new ScriptedDropException("scripted drop of " + tag);
            case "laterexc" -> throw new ScriptedLaterException("scripted retryAfter of " + tag);
            default -> throw new IllegalArgumentException("unknown action " + action);
        };
    }

    private static synchronized void write(Path record, String line) {
        try {
            Files.writeString(
                    record, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
