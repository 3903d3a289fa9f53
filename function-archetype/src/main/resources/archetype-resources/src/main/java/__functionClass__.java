package ${package};

import org.apache.pulsar.functions.api.Context;
import org.apache.pulsar.functions.api.Function;

/**
 * Greets each name published to the input topic; Settle publishes the greeting to the manifest's {@code output}
 * and acknowledges the name only once the greeting is stored. A {@code Function<String, String>}: payloads are
 * UTF-8 text both ways (use a record of yours as a type argument to have JSON instead).
 *
 * <ul>
 *   <li>a blank name returns {@code null}: nothing is published, the input is acknowledged;
 *   <li>a name starting with {@code poison} throws: retried after the failure backoff, then dead-lettered after
 *       {@code maxAttempts};
 *   <li>anything else is greeted with the {@code greeting} of the manifest's {@code config}.
 * </ul>
 *
 * Settle delivers at least once: a retried input publishes again, so keep functions idempotent.
 */
public class ${functionClass} implements Function<String, String> {
    @Override
    public String process(String name, Context context) {
        String trimmed = name.strip();
        if (trimmed.isEmpty()) {
            return null;
        }
        if (trimmed.startsWith("poison")) {
            throw new IllegalArgumentException("cannot greet " + trimmed);
        }
        String greeting = context.getUserConfigValueOrDefault("greeting", "hello") + ", " + trimmed;
        context.getLogger().info("greeting {}", trimmed);
        return greeting;
    }
}
