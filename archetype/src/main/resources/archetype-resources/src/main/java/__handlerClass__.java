package ${package};

import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import java.time.Duration;

/**
 * Greets each name published to the topic. A {@code Handler<String>}: Settle hands over each payload as UTF-8 text
 * (use a record of yours as the type argument to have JSON decoded instead).
 *
 * <ul>
 *   <li>a blank name is dropped: acknowledged, counted as {@code drop};
 *   <li>{@code busy} is retried in 10 seconds ({@code retryAfter}), as a call to a rate-limited service would be;
 *   <li>anything else is greeted and acknowledged.
 * </ul>
 *
 * A handler that throws has the message retried after the failure backoff, and after {@code maxAttempts} attempts
 * it goes to the dead-letter topic. Settle delivers at least once: keep handlers idempotent.
 */
public final class ${handlerClass} implements Handler<String> {
    static final Duration BUSY_BACKOFF = Duration.ofSeconds(10);

    private volatile String greeting = "hello";

    @Override
    public void open(HandlerContext context) {
        greeting = context.config().getOrDefault("greeting", greeting);
    }

    @Override
    public Outcome handle(Delivery<String> delivery) {
        String name = delivery.value().strip();
        if (name.isEmpty()) {
            return Outcome.drop();
        }
        if (name.equals("busy") && delivery.attempt() == 1) {
            return Outcome.retryAfter(BUSY_BACKOFF);
        }
        System.out.println(greeting + ", " + name + " (attempt " + delivery.attempt() + ")");
        return Outcome.ack();
    }
}
