package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.publish.BrokerCause;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Subscribes a driver's consumer, waiting out whatever can pass: the broker unreachable or restarting, a topic not
 * there yet, another runtime holding an Exclusive subscription ({@code ConsumerBusyException}, which the client
 * itself does not retry). It tries again after 200 ms, doubling up to {@link #MAX_WAIT}, logs one line (no stack)
 * at most every {@link #LOG_EVERY}, and gives up only on what waiting cannot fix: a schema the topic refuses, or a
 * configuration the client rejects. A stop ends the wait within {@link #POLL}.
 */
final class Subscriber {
    private static final Logger log = LoggerFactory.getLogger(Subscriber.class);
    static final Duration FIRST_WAIT = Duration.ofMillis(200);
    /** Short, so a second runtime takes over an Exclusive subscription within seconds of the first one's stop. */
    static final Duration MAX_WAIT = Duration.ofSeconds(5);

    static final Duration LOG_EVERY = Duration.ofSeconds(30);
    private static final Duration POLL = Duration.ofMillis(100);

    private final SubscriptionSpec spec;
    private final Supplier<ConsumerBuilder<?>> builder;
    private final Schema<?> schema;
    private final BooleanSupplier stopping;
    private final Consumer<String> waitingFor;
    private final Time time;

    /**
     * @param builder a new builder for each attempt, so no attempt sees what an earlier one left in it
     * @param schema the schema the consumer reads with, named when a topic refuses it
     * @param stopping whether the driver is stopping: the wait ends, and a consumer subscribed too late is closed
     * @param waitingFor told what the subscription waits for (for {@code /readyz}), and {@code null} once subscribed
     * @param time paces the waits between attempts
     */
    Subscriber(
            SubscriptionSpec spec,
            Supplier<ConsumerBuilder<?>> builder,
            Schema<?> schema,
            BooleanSupplier stopping,
            Consumer<String> waitingFor,
            Time time) {
        this.spec = spec;
        this.builder = builder;
        this.schema = schema;
        this.stopping = stopping;
        this.waitingFor = waitingFor;
        this.time = time;
    }

    /**
     * The consumer, once subscribed; empty when the driver stopped first.
     *
     * @throws SubscribeRefusedException when waiting cannot help
     */
    Optional<org.apache.pulsar.client.api.Consumer<?>> subscribe()
            throws SubscribeRefusedException, InterruptedException {
        Duration wait = FIRST_WAIT;
        long started = time.nanoTime();
        long lastLogged = Long.MIN_VALUE;
        int attempts = 0;
        while (!stopping.getAsBoolean()) {
            attempts++;
            CompletableFuture<? extends org.apache.pulsar.client.api.Consumer<?>> subscribing =
                    builder.get().subscribeAsync();
            Throwable failure;
            try {
                Optional<org.apache.pulsar.client.api.Consumer<?>> consumer = await(subscribing);
                if (consumer.isPresent()) {
                    waitingFor.accept(null);
                    if (attempts > 1) {
                        log.info(
                                "subscription '{}': subscribed after {} attempts in {}",
                                spec.name(),
                                attempts,
                                DurationText.elapsed(Duration.ofNanos(time.nanoTime() - started)));
                    }
                }
                return consumer;
            } catch (ExecutionException e) {
                failure = e.getCause();
            }
            String reason = describe(failure);
            if (failure instanceof PulsarClientException.IncompatibleSchemaException incompatible) {
                SchemaConflictException conflict = SchemaConflictException.of(spec, schema, incompatible);
                throw new SubscribeRefusedException(conflict.getMessage(), conflict);
            }
            if (!retriable(failure)) {
                throw new SubscribeRefusedException(
                        "subscription '" + spec.name() + "' cannot subscribe to " + spec.topics() + ": " + reason,
                        failure);
            }
            waitingFor.accept(reason);
            long now = time.nanoTime();
            if (lastLogged == Long.MIN_VALUE || now - lastLogged >= LOG_EVERY.toNanos()) {
                lastLogged = now;
                log.warn(
                        "subscription '{}': cannot subscribe yet ({}); trying again every {} s at most, not ready"
                                + " until then",
                        spec.name(),
                        reason,
                        MAX_WAIT.toSeconds());
            }
            sleep(wait);
            wait = wait.multipliedBy(2).compareTo(MAX_WAIT) > 0 ? MAX_WAIT : wait.multipliedBy(2);
        }
        return Optional.empty();
    }

    /** The consumer, or empty when the driver stopped first (a consumer that still arrives is closed). */
    private Optional<org.apache.pulsar.client.api.Consumer<?>> await(
            CompletableFuture<? extends org.apache.pulsar.client.api.Consumer<?>> subscribing)
            throws ExecutionException, InterruptedException {
        while (true) {
            try {
                return Optional.of(subscribing.get(POLL.toMillis(), TimeUnit.MILLISECONDS));
            } catch (TimeoutException notYet) {
                if (stopping.getAsBoolean()) {
                    subscribing.thenAccept(late -> late.closeAsync());
                    return Optional.empty();
                }
            }
        }
    }

    /** Waits on the runtime's timer, so a manual clock drives it too; a stop ends the wait within {@link #POLL}. */
    private void sleep(Duration wait) throws InterruptedException {
        CountDownLatch due = new CountDownLatch(1);
        try {
            time.schedule(wait, due::countDown);
        } catch (RejectedExecutionException closed) {
            return; // the timer closes only once the runtime stops, which the caller's loop sees next
        }
        while (!stopping.getAsBoolean() && !due.await(POLL.toMillis(), TimeUnit.MILLISECONDS)) {
            // polled, so that a stop is seen
        }
    }

    /** What waiting cannot change: the topic's schema, or a setting the client refuses. */
    static boolean retriable(Throwable failure) {
        return !(failure instanceof PulsarClientException.IncompatibleSchemaException
                || failure instanceof PulsarClientException.InvalidConfigurationException
                || failure instanceof PulsarClientException.InvalidServiceURL
                || failure instanceof PulsarClientException.NotSupportedException
                || failure instanceof PulsarClientException.InvalidTopicNameException);
    }

    /** One line: the client's exceptions nest the reason in their message, often several times. */
    static String describe(Throwable failure) {
        if (failure instanceof PulsarClientException.ConsumerBusyException) {
            return "another consumer holds this Exclusive subscription (ConsumerBusy)";
        }
        // One cause, not the client's four wrappers: "connection refused at localhost:6650 — is `settle dev` running?"
        return BrokerCause.describe(failure);
    }
}
