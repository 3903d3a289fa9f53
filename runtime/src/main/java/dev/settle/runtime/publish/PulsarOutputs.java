package dev.settle.runtime.publish;

import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.ProducerBuilder;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Outputs} through one Pulsar producer per output topic. A function's {@code output:} topic gets its producer
 * when the subscription starts ({@link #prepare}): until it exists, {@link #notReady()} says why, so the subscription
 * stays unready instead of failing every message, and its creation is retried every {@link #RETRY} (one log line
 * when it fails, one when it recovers). Any other topic ({@code context.publish}, a handler's publishers) gets its
 * producer at the first message for it, created asynchronously: the call is not held up, the message is sent once
 * the producer exists, in order with the later messages to the topic, and fails (so its delivery is retried) if the
 * producer cannot be had.
 *
 * <p>Producers are built from the subscription's {@code output:} settings, whose defaults are a Pulsar Functions
 * output producer's (batching on, 10 ms, LZ4), always with {@code blockIfQueueFull}: outputs are pipelined, so a
 * call does not wait for its send and many sends share one broker write; the driver bounds what is pending
 * ({@code maxPendingOutputs}). A producer that fails for good (closed, its topic terminated or deleted) is dropped
 * and made again at the next message.
 */
public final class PulsarOutputs implements Outputs {
    private static final Logger log = LoggerFactory.getLogger(PulsarOutputs.class);
    /**
     * Where a new producer's waiting messages are sent from, off the client's network thread; threads come and go
     * with producer creations (idle ones end after a minute), daemons so that they never hold the JVM up.
     */
    private static final ExecutorService DEFERRED_SENDS = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "settle-deferred-sends");
        thread.setDaemon(true);
        return thread;
    });
    /** How often the producer of a prepared output topic that cannot be written is asked for again. */
    static final Duration RETRY = Duration.ofSeconds(5);

    private final Supplier<PulsarClient> client;
    private final String owner;
    /** Read when a producer is made: a reload may change it ({@link #reconfigure}). */
    private volatile ProducerSettings settings;
    /** Whether messages are sent in transactions (exactly-once), which the client allows only without a send timeout. */
    private final boolean transactional;
    /** Producers by topic and schema, each with the messages waiting for it to exist. */
    private final Map<String, Slot> producers = new ConcurrentHashMap<>();
    /** The topics {@link #prepare}d, with their schemas: made again by {@link #reconfigure}. */
    private final Map<String, Schema<?>> prepared = new ConcurrentHashMap<>();
    /** Topics prepared at start whose producer cannot be had yet, with why. */
    private final Map<String, String> unready = new ConcurrentHashMap<>();

    private final Time time;

    private volatile boolean closed;

    /**
     * @param client the client, asked for at the first message
     * @param owner names the log lines
     * @param settings how the producers send
     * @param time the runtime's timer, which asks again for the producer of a prepared topic
     */
    public PulsarOutputs(Supplier<PulsarClient> client, String owner, ProducerSettings settings, Time time) {
        this(client, owner, settings, false, time);
    }

    /** @param transactional whether messages will be sent in transactions ({@code guarantee: exactly-once}) */
    public PulsarOutputs(
            Supplier<PulsarClient> client, String owner, ProducerSettings settings, boolean transactional, Time time) {
        this.client = client;
        this.owner = owner;
        this.settings = settings;
        this.transactional = transactional;
        this.time = time;
    }

    /**
     * Creates the producer of {@code topic} now, in the background, retried every {@link #RETRY} until it exists or
     * these outputs close; {@link #notReady()} names the topic meanwhile. For the topic every message of the
     * subscription goes to (a function's {@code output:}): a topic that cannot be written keeps the subscription
     * unready rather than failing each message.
     */
    public void prepare(String topic, Schema<?> schema) {
        prepared.put(topic, schema);
        unready.put(topic, "creating the producer of the output topic " + topic);
        attempt(topic, schema, null);
    }

    /** @param lastFailure the class of the last attempt's failure, null for none: logged once per kind */
    private void attempt(String topic, Schema<?> schema, String lastFailure) {
        if (closed) {
            return;
        }
        Slot slot = slot(topic, schema);
        slot.producer.whenComplete((producer, error) -> {
            if (error == null) {
                if (unready.remove(topic) != null && lastFailure != null) {
                    log.info("{}: the output topic {} can be written now; the subscription starts", owner, topic);
                }
                return;
            }
            // A broker that cannot be reached is not a missing topic or permission: say which it is.
            String reason = BrokerCause.unreachable(error)
                    .map(unreachable -> "the output topic " + topic + " cannot be written yet: " + unreachable
                            + ". Retried every " + RETRY.toSeconds() + " s")
                    .orElseGet(() -> "the output topic " + topic + " cannot be written (" + describe(error)
                            + "); create it, or grant this role produce permission on it. Retried every "
                            + RETRY.toSeconds() + " s");
            unready.put(topic, reason);
            String failure = cause(error).getClass().getName();
            if (!failure.equals(lastFailure)) {
                // One line, not one per retry: the readiness probe says the same until it is mended.
                log.warn("{}: {}; the subscription stays unready until then", owner, reason);
            }
            try {
                time.schedule(RETRY, () -> attempt(topic, schema, failure));
            } catch (RejectedExecutionException timerClosed) {
                // The runtime stops: nothing more is published.
            }
        });
    }

    /** Why a prepared output topic cannot be written yet; empty once every one has its producer. */
    public Optional<String> notReady() {
        for (String reason : unready.values()) {
            return Optional.of(reason);
        }
        return Optional.empty();
    }

    /**
     * Sends what the producers hold in their batches now instead of at the end of the batch delay. The driver calls it
     * when its subscription has nothing more to hand out (no message received and waiting, no call running), so a lone
     * output at a low rate does not wait out the delay, while a busy stream, which always has a next message, still
     * fills its batches. Returns at once.
     */
    public void flush() {
        for (Slot slot : producers.values()) {
            Producer<?> producer = slot.readyProducer(null);
            if (producer != null) {
                producer.flushAsync();
            }
        }
    }

    @Override
    public <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema) throws PulsarClientException {
        return newMessage(topic, schema, null, Producer::newMessage);
    }

    @Override
    public <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema, Transaction transaction)
            throws PulsarClientException {
        if (!transactional) {
            // The client refuses a transactional message from a producer with a send timeout: say why instead.
            throw new PulsarClientException.NotSupportedException(
                    "the outputs of " + owner + " were not made for transactions (guarantee: exactly-once)");
        }
        return newMessage(topic, schema, transaction, producer -> producer.newMessage(transaction));
    }

    /** @param transaction the transaction the message is sent in; null for none */
    @SuppressWarnings("unchecked")
    private <T> TypedMessageBuilder<T> newMessage(
            String topic, Schema<T> schema, Transaction transaction, Function<Producer<T>, TypedMessageBuilder<T>> make)
            throws PulsarClientException {
        if (closed) {
            throw new PulsarClientException.AlreadyClosedException("the outputs of " + owner + " are closed");
        }
        Slot slot = slot(topic, schema);
        Producer<T> ready = (Producer<T>) slot.readyProducer(transaction);
        if (ready != null) {
            return tracked(slot, made(ready, transaction, make));
        }
        // Not created yet, or its topic not registered in the transaction yet: the call goes on, and the message is
        // sent once it can be, after those made before it.
        return new DeferredMessageBuilder<T>(recorded -> slot.whenReady(transaction, producer -> {
            TypedMessageBuilder<T> message = tracked(slot, made((Producer<T>) producer, transaction, make));
            recorded.accept(message);
            return message;
        }));
    }

    /**
     * {@code producer}'s message; in a transaction, one that fails if the connection dropped while it was on its way
     * ({@link ResendGuardedMessageBuilder}): the client's resend may have stored it twice in the transaction.
     */
    private static <T> TypedMessageBuilder<T> made(
            Producer<T> producer, Transaction transaction, Function<Producer<T>, TypedMessageBuilder<T>> make) {
        TypedMessageBuilder<T> message = make.apply(producer);
        return transaction == null ? message : new ResendGuardedMessageBuilder<>(message, producer);
    }

    private <T> TypedMessageBuilder<T> tracked(Slot slot, TypedMessageBuilder<T> message) {
        return new TrackedMessageBuilder<>(
                message,
                sent -> sent.whenComplete((id, error) -> {
                    if (closedForGood(error)) {
                        // The client never reconnects such a producer: the next message makes a new one.
                        forget(slot);
                    }
                }));
    }

    /** The slot of {@code topic} with {@code schema}, its producer being created if it was not. */
    private Slot slot(String topic, Schema<?> schema) {
        String key = topic + "|" + schema.getSchemaInfo().getType() + "|"
                + schema.getSchemaInfo().getName();
        Slot slot = producers.get(key);
        if (slot != null) {
            return slot;
        }
        Slot created = new Slot(key);
        slot = producers.putIfAbsent(key, created);
        if (slot != null) {
            return slot;
        }
        CompletableFuture<? extends Producer<?>> creating;
        try {
            creating = builder(topic, schema).createAsync();
        } catch (RuntimeException noClientYet) {
            // No client yet (a handler publishing from open()), or a setting the client refuses: the next message
            // asks again.
            producers.remove(key, created);
            created.producer.completeExceptionally(noClientYet);
            return created;
        }
        // Async: the client completes the creation on its network thread, under the producer's monitor, and the
        // messages waiting for it are sent from here; a send that blocks for queue room (blockIfQueueFull) there
        // would wait for that very thread and stop the whole client.
        creating.whenCompleteAsync(
                (producer, error) -> {
                    if (error != null) {
                        // The next message (or prepare's retry) asks again.
                        producers.remove(key, created);
                        created.producer.completeExceptionally(error);
                        return;
                    }
                    if (closed) {
                        producer.closeAsync();
                        created.producer.completeExceptionally(new PulsarClientException.AlreadyClosedException(
                                "the outputs of " + owner + " are closed"));
                        return;
                    }
                    log.info(
                            "{}: publishing to {} ({} schema)",
                            owner,
                            topic,
                            schema.getSchemaInfo().getType());
                    created.producer.complete(producer);
                },
                DEFERRED_SENDS);
        return created;
    }

    /** The producers made so far (one a topic and settings), as the client runs them. */
    public List<Producer<?>> producers() {
        return producers.values().stream()
                .map(slot -> slot.producer)
                .filter(made -> made.isDone() && !made.isCompletedExceptionally())
                .<Producer<?>>map(CompletableFuture::join)
                .toList();
    }

    private void forget(Slot slot) {
        if (producers.remove(slot.key, slot)) {
            slot.producer.thenAccept(Producer::closeAsync);
        }
    }

    /**
     * One producer, while it is created and after. Messages made before it exists wait in a chain, so they are sent
     * in the order they were made, and later messages go after them: a message goes straight to the producer only
     * once it exists and nothing waits for it. A message in a transaction also waits in the chain until the
     * transaction has registered the topic ({@link TransactionTopics}), so that no later message, of this transaction
     * or the next, is sent before it.
     */
    private static final class Slot {
        final String key;
        final CompletableFuture<Producer<?>> producer = new CompletableFuture<>();
        /** Guarded by this: the last message waiting for the producer, or the producer itself. */
        private CompletableFuture<?> tail = producer;
        /** Guarded by this: messages waiting in the chain. */
        private int waiting;
        /** Guarded by this: the last transaction seen to have registered the topic; null for none. */
        private Transaction registeredIn;

        Slot(String key) {
            this.key = key;
        }

        /**
         * The producer, when it exists, no message waits for it and {@code transaction} (null: none) has registered
         * its topic; else null.
         */
        synchronized Producer<?> readyProducer(Transaction transaction) {
            if (waiting != 0 || !producer.isDone() || producer.isCompletedExceptionally()) {
                return null;
            }
            Producer<?> ready = producer.getNow(null);
            if (transaction == null || transaction == registeredIn) {
                return ready;
            }
            if (!TransactionTopics.registered(transaction, ready).isDone()) {
                return null;
            }
            registeredIn = transaction;
            return ready;
        }

        /**
         * Sends with {@code send} once the producer exists, {@code transaction} (null: none) has registered its
         * topic, and every message made before has been sent.
         */
        synchronized CompletableFuture<MessageId> whenReady(
                Transaction transaction, Function<Producer<?>, TypedMessageBuilder<?>> send) {
            waiting++;
            CompletableFuture<MessageId> sent = new CompletableFuture<>();
            CompletableFuture<?> before = tail;
            if (transaction != null) {
                // A registration still awaited is answered on the client's network thread: the send is then made off
                // it (a send that blocks for queue room there would stop the client); one answered already goes on
                // here, without a hop to another thread for each message. A failed registration fails the send itself.
                before = before.handle((ignored, error) -> producer.isCompletedExceptionally()
                                ? CompletableFuture.<Void>completedFuture(null)
                                : TransactionTopics.registered(transaction, producer.join()))
                        .thenCompose(registration -> registration.isDone()
                                ? CompletableFuture.<Void>completedFuture(null)
                                : registration.<Void>handleAsync((ignored, error) -> null, DEFERRED_SENDS));
            }
            tail = before.handle((ignored, error) -> {
                try {
                    Producer<?> ready = producer.join();
                    send.apply(ready).sendAsync().whenComplete((id, failure) -> {
                        if (failure != null) {
                            sent.completeExceptionally(failure);
                        } else {
                            sent.complete(id);
                        }
                    });
                } catch (VirtualMachineError fatal) {
                    sent.completeExceptionally(fatal);
                    throw fatal;
                } catch (Throwable failed) {
                    // An Error too (encoding runs the message's schema, which may be user code): the send must
                    // complete, or its input would never settle and its count would stay in maxPendingOutputs.
                    sent.completeExceptionally(
                            failed instanceof RuntimeException && failed.getCause() != null
                                    ? failed.getCause()
                                    : failed);
                } finally {
                    synchronized (this) {
                        waiting--;
                    }
                }
                return null;
            });
            return sent;
        }
    }

    private static Throwable cause(Throwable error) {
        return error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                ? error.getCause()
                : error;
    }

    private static String describe(Throwable error) {
        Throwable cause = cause(error);
        String message = cause.getMessage();
        return cause.getClass().getSimpleName()
                + (message == null ? "" : ": " + message.lines().findFirst().orElse(""));
    }

    /** A producer of {@code topic} as the settings say. */
    private <T> ProducerBuilder<T> builder(String topic, Schema<T> schema) {
        ProducerBuilder<T> builder = client.get()
                .newProducer(schema)
                .topic(topic)
                .enableBatching(settings.batching())
                .compressionType(settings.compression())
                // Waiting for room beats failing the delivery: maxPendingOutputs bounds what is in flight.
                .blockIfQueueFull(true);
        if (settings.batching()) {
            builder.batchingMaxPublishDelay(settings.batchingMaxDelay().toNanos(), TimeUnit.NANOSECONDS);
        }
        if (settings.maxPendingMessages() > 0) {
            builder.maxPendingMessages(settings.maxPendingMessages());
        }
        if (transactional) {
            // The client sends a transactional message only from a producer without a send timeout
            // (ProducerBase.newMessage(Transaction)); the transaction's own timeout bounds the send instead.
            builder.sendTimeout(0, TimeUnit.SECONDS);
        }
        return builder;
    }

    private static boolean closedForGood(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause()) {
            if (e instanceof PulsarClientException.AlreadyClosedException
                    || e instanceof PulsarClientException.TopicTerminatedException
                    || e instanceof PulsarClientException.ProducerFencedException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Makes producers with {@code next} from now on: a reload that changes {@code output:} while the code (and so these
     * outputs, which its context holds) goes on running. The producers made with the old settings are closed, which
     * sends what they batch first, and the prepared topics get new ones at once. Called while the subscription's
     * driver is stopped, so no call is sending; nothing happens when the settings are the same.
     */
    public void reconfigure(ProducerSettings next) {
        if (next.equals(settings)) {
            return;
        }
        settings = next;
        closeProducers();
        prepared.forEach(this::prepare);
        log.info("{}: the output producers are made again with the new output: settings", owner);
    }

    @Override
    public void close() {
        closed = true;
        closeProducers();
        unready.clear();
    }

    private void closeProducers() {
        for (Slot slot : producers.values()) {
            Producer<?> producer = slot.producer.getNow(null);
            if (producer == null) {
                continue;
            }
            try {
                // Flushes what is batched: a send still pending completes (or fails) before the consumer closes.
                producer.close();
            } catch (PulsarClientException e) {
                log.warn("{}: closing the producer of {} failed", owner, producer.getTopic(), e);
            }
        }
        producers.clear();
    }
}
