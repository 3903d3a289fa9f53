package dev.settle.examples.orders;

import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Optional;

/**
 * An order handler that shows every outcome. It is a {@code Handler<Order>}: the runtime decodes each message as
 * JSON of {@link Order} (Pulsar's JSON schema, chosen from the type argument), so the handler works with a typed
 * value and parses nothing itself.
 *
 * <ul>
 *   <li>a good order is acknowledged ({@link Outcome#ack()});
 *   <li>an order no attempt can fix (a member missing, quantity below 1: see {@link Order#problem()}) is dropped
 *       ({@link Outcome#drop()});
 *   <li>sku {@code flaky} simulates a transient failure: its first attempt is retried at once
 *       ({@link Outcome#retry()}), the second succeeds;
 *   <li>a quantity above the rate limit (100, or the subscription's {@code config: rateLimitedQuantity})
 *       simulates the warehouse's rate limit: its first attempt is retried after two seconds
 *       ({@link Outcome#retryAfter(Duration)}), the second succeeds;
 *   <li>sku {@code poison} always fails: it is retried on every attempt, so after {@code maxAttempts} it lands on
 *       the dead-letter topic.
 * </ul>
 *
 * <p>A payload that is not JSON of an order never reaches {@link #handle(Delivery)}: the runtime cannot decode
 * it, counts it as a failure ({@code error}) and, like a handler that throws, retries it until the dead-letter
 * cap sends it to the dead-letter topic.
 *
 * <p>Decisions other than ack are logged through {@link System.Logger}, so the JAR needs nothing beside the SDK.
 * The handler keeps no state between messages, so it is safe with any {@code concurrency}, and idempotent.
 */
public final class OrderHandler implements Handler<Order> {

    static final int DEFAULT_RATE_LIMITED_QUANTITY = 100;
    static final Duration RATE_LIMIT_BACKOFF = Duration.ofSeconds(2);

    private static final System.Logger LOG = System.getLogger(OrderHandler.class.getName());

    // Written once in open(), before the first handle(); volatile because handle() may run on other threads.
    private volatile int rateLimitedQuantity = DEFAULT_RATE_LIMITED_QUANTITY;

    /** Settle creates the handler with this constructor. */
    public OrderHandler() {}

    @Override
    public void open(HandlerContext context) {
        String configured = context.config().get("rateLimitedQuantity");
        if (configured != null) {
            try {
                rateLimitedQuantity = Integer.parseInt(configured.strip());
            } catch (NumberFormatException e) {
                // Thrown from open: the runtime refuses to start and shows this message.
                throw new IllegalArgumentException(
                        "config rateLimitedQuantity must be a whole number, was '" + configured + "'", e);
            }
        }
        LOG.log(
                Level.INFO,
                "Orders of subscription {0}: quantities above {1} are rate limited",
                context.subscription(),
                rateLimitedQuantity);
    }

    @Override
    public Outcome handle(Delivery<Order> delivery) {
        Order order = delivery.value();
        Optional<String> problem = order.problem();
        if (problem.isPresent()) {
            LOG.log(
                    Level.WARNING,
                    "Dropping message {0}: not an order the warehouse can take: {1}",
                    delivery.messageId(),
                    problem.get());
            return Outcome.drop();
        }
        if (order.sku().equals("poison")) {
            LOG.log(
                    Level.WARNING,
                    "Order {0} failed on attempt {1}; retrying (it always fails, so it reaches the"
                            + " dead-letter topic after the last attempt)",
                    order.id(),
                    delivery.attempt());
            return Outcome.retry();
        }
        if (order.sku().equals("flaky") && delivery.attempt() == 1) {
            LOG.log(Level.INFO, "Order {0} hit a transient failure; retrying at once", order.id());
            return Outcome.retry();
        }
        if (order.quantity() > rateLimitedQuantity && delivery.attempt() == 1) {
            LOG.log(
                    Level.INFO,
                    "Order {0} for {1} items is rate limited; retrying in {2}",
                    order.id(),
                    order.quantity(),
                    RATE_LIMIT_BACKOFF);
            return Outcome.retryAfter(RATE_LIMIT_BACKOFF);
        }
        return Outcome.ack();
    }
}
