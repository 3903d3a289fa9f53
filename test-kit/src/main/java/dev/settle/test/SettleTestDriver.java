package dev.settle.test;

import dev.settle.runtime.PortChain;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.function.FunctionPort;
import dev.settle.runtime.isolation.FunctionJarScan;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.LoadedFunction;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.SettleMetrics;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.BatchHandler;
import dev.settle.sdk.Handler;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.SummarySnapshot;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.internal.DefaultImplementation;
import org.slf4j.LoggerFactory;

/**
 * Runs handlers as {@code settle run} would, without a broker: the runtime's own manifest validation, handler
 * loading, decoding, {@code Delivery}, {@code HandlerContext} and settlement rules, on a simulated broker that
 * counts, redelivers and dead-letters as Pulsar 4.2.4 does, and on a clock that only {@link #advance} moves.
 *
 * <pre>{@code
 * try (SettleTestDriver settle = SettleTestDriver.fromManifest(Path.of("orders.yaml"))) {
 *     settle.send(new Order("o-1", "poison", 1));
 *     settle.advance(Duration.ofMinutes(1));
 *     assertThat(settle.deadLetters()).hasSize(1);
 * }
 * }</pre>
 *
 * <p>A {@code send} returns once the handler has run on the message and on everything that came back without
 * the clock moving (a {@code retry()} comes back at once). {@link #advance} runs each wait that comes due
 * (a {@code retryAfter}, a failure backoff, an ack timeout) at its time, and hands what it brought back to the
 * handler before the next.
 *
 * <p>Not thread-safe: one test thread drives it. With {@code concurrency} above 1 the handler runs on a pool of
 * that many threads, messages of one key in order, as in the runtime.
 *
 * <p><b>Supported API</b>: kept stable across releases (docs/design.md, "The supported API").
 */
public final class SettleTestDriver implements AutoCloseable {
    /** Starts at the real time the driver is made, so publish times look current to a handler; then only moves. */
    private final KitClock clock;

    private final SettleMetrics metrics = new SettleMetrics();
    private final Map<String, TestSubscription> subscriptions = new LinkedHashMap<>();
    private final Map<String, TopicLog> topics = new HashMap<>();
    private final List<AutoCloseable> handlers = new ArrayList<>();
    private final List<RecordingOutputs> outputs = new ArrayList<>();
    private final List<Published> published = new CopyOnWriteArrayList<>();
    private final Set<String> failingTopics = ConcurrentHashMap.newKeySet();
    private final Deployment deployment;
    private long nextLedger = 100;
    private boolean closed;
    /** Whether a handler call is in {@link #sleep}: the clock's tasks then hand nothing new out. */
    private volatile boolean sleepingInCall;

    private static final class TopicLog {
        final long ledger;
        long nextEntry;
        final List<SimulatedMessage> messages = new ArrayList<>();

        TopicLog(long ledger) {
            this.ledger = ledger;
        }
    }

    private SettleTestDriver(Deployment deployment, Instant start) {
        this.deployment = deployment;
        this.clock = new KitClock(start);
        // Not while a handler sleeps in its call: its subscription's next message waits for the call to end, as the
        // pump that made the call hands it out then.
        clock.afterEachTask(() -> {
            if (!sleepingInCall) {
                pump();
            }
        });
    }

    /**
     * Every subscription of a manifest, checked exactly as {@code settle run} checks it ({@code Preflight}): an
     * invalid manifest or a handler that cannot be loaded fails with the messages {@code settle validate} prints.
     * Handlers are loaded from their JARs in their own class loaders, and opened. {@code ${...}} is looked up in
     * the process environment; {@code pulsar:} is read and validated, and never connected to.
     *
     * @throws ManifestException with every problem of the manifest or its handlers
     * @throws HandlerLoadException when a handler's {@code open} throws
     */
    public static SettleTestDriver fromManifest(Path manifest)
            throws ManifestException, IOException, HandlerLoadException {
        return fromManifest(manifest, System.getenv());
    }

    /** As {@link #fromManifest(Path)}, with {@code ${...}} looked up in {@code environment}. */
    public static SettleTestDriver fromManifest(Path manifest, Map<String, String> environment)
            throws ManifestException, IOException, HandlerLoadException {
        Deployment deployment = Preflight.check(manifest, environment);
        SettleTestDriver driver = new SettleTestDriver(deployment, Instant.now());
        try {
            for (SubscriptionSpec spec : deployment.subscriptions()) {
                // The ports Settle runs, from the same factory: a handler publishes through its context, a function
                // through its port; the kit's outputs record what either sends.
                RecordingOutputs sent = driver.outputsFor(spec);
                Optional<LoadedFunction> function = deployment.function(spec.name());
                if (function.isPresent()) {
                    driver.addFunction(spec, function.get(), sent, environment::get);
                } else {
                    LoadedHandler handler = deployment.handler(spec.name());
                    driver.handlers.add(handler);
                    // A batch handler gathers on the kit's clock: its maxWait passes when the test advances it.
                    driver.add(
                            spec,
                            PortChain.handler(
                                    handler, spec, sent, driver.clock, driver.metrics.forSubscription(spec.name())),
                            null);
                }
            }
        } catch (HandlerLoadException | RuntimeException e) {
            driver.close();
            throw e;
        }
        return driver;
    }

    /**
     * One handler instance on one subscription built in code, e.g. {@code SubscriptionSpec.builder("orders",
     * List.of("orders")).deadLetter(5, "orders-dlq").ackTimeout(Duration.ofSeconds(30)).build()}. The handler is
     * opened here with the subscription's context and closed with the driver.
     *
     * @param messageType the handler's {@code T}: {@code String.class}, {@code byte[].class} or the class it
     *     decodes as JSON
     * @throws Exception what the handler's {@code open} throws
     */
    public static <T> SettleTestDriver forHandler(Handler<T> handler, Class<T> messageType, SubscriptionSpec spec)
            throws Exception {
        SettleTestDriver driver = new SettleTestDriver(null, Instant.now());
        // Its publishers build their schemas in the handler's loader, as a manifest's handler does in its JAR's.
        HandlerPort port = PortChain.handler(handler, messageType, spec, driver.outputsFor(spec));
        driver.handlers.add(handler::close);
        driver.add(spec, port, null);
        return driver;
    }

    /**
     * One batch handler instance on one subscription built in code, its {@code batch:} limits those of {@code spec}
     * ({@code SubscriptionSpec.builder(...).batch(new BatchLimits(100, BatchLimits.DEFAULT_MAX_BYTES,
     * Duration.ofMillis(20)))}, or the defaults). Messages join the open batch as they are sent; it is called once it
     * holds {@code maxMessages}, or when {@link #advance} passes its {@code maxWait}. Opened here, closed with the
     * driver.
     *
     * @param messageType the handler's {@code T}: {@code String.class}, {@code byte[].class} or the class it
     *     decodes as JSON
     * @throws Exception what the handler's {@code open} throws
     */
    public static <T> SettleTestDriver forBatchHandler(
            BatchHandler<T> handler, Class<T> messageType, SubscriptionSpec spec) throws Exception {
        SettleTestDriver driver = new SettleTestDriver(null, Instant.now());
        HandlerPort port = PortChain.batchHandler(
                handler,
                messageType,
                spec,
                driver.outputsFor(spec),
                driver.clock,
                driver.metrics.forSubscription(spec.name()));
        driver.handlers.add(handler::close);
        driver.add(spec, port, null);
        return driver;
    }

    /**
     * A Pulsar Function instance on one subscription built in code: its {@code function(className, settings)} says
     * where return values go ({@code output}), its {@code config} is the user config. {@code initialize} is called
     * here with a context that has no current record, {@code close} with the driver. Secrets are read from the
     * process environment.
     *
     * @param function an {@code org.apache.pulsar.functions.api.Function} or a {@code java.util.function.Function}
     * @param inputType the function's input type: {@code String.class}, {@code byte[].class} or a class read as JSON
     * @param outputType the function's output type, which its return values are published as
     * @throws HandlerLoadException when its {@code initialize} throws
     */
    public static <I, O> SettleTestDriver forFunction(
            Object function, Class<I> inputType, Class<O> outputType, SubscriptionSpec spec)
            throws HandlerLoadException {
        boolean pulsarFunction = function instanceof org.apache.pulsar.functions.api.Function;
        if (!pulsarFunction && !(function instanceof java.util.function.Function)) {
            throw new IllegalArgumentException("a function is an org.apache.pulsar.functions.api.Function or a"
                    + " java.util.function.Function, not a "
                    + function.getClass().getName());
        }
        LoadedFunction loaded = new LoadedFunction(
                function.getClass().getName(),
                function,
                pulsarFunction,
                function.getClass().getClassLoader(),
                inputType,
                outputType,
                Path.of("(in code)").toAbsolutePath(),
                Optional.empty(),
                new FunctionJarScan(List.of(), List.of()),
                false,
                Optional.empty());
        SettleTestDriver driver = new SettleTestDriver(null, Instant.now());
        try {
            driver.addFunction(spec, loaded, driver.outputsFor(spec), System::getenv);
        } catch (HandlerLoadException | RuntimeException e) {
            driver.close();
            throw e;
        }
        return driver;
    }

    private RecordingOutputs outputsFor(SubscriptionSpec spec) {
        RecordingOutputs sent = new RecordingOutputs(this, spec.name());
        outputs.add(sent);
        return sent;
    }

    /** A function's port as Settle makes it, with a logger and a metric sink that also record. */
    private void addFunction(
            SubscriptionSpec spec, LoadedFunction function, RecordingOutputs sent, Function<String, String> environment)
            throws HandlerLoadException {
        RecordingLogger logger = new RecordingLogger(LoggerFactory.getLogger(function.className()));
        FunctionRecording recording = new FunctionRecording(spec, logger, this);
        FunctionPort port = PortChain.function(
                function,
                spec,
                sent,
                new FunctionPort.Surroundings(
                        (name, value) -> {
                            metrics.functionMetric(spec.name(), name, value);
                            recording.recordMetric(name, value);
                        },
                        environment,
                        logger,
                        // A state the manifest keeps starts empty: the kit has no broker to read it back from.
                        topic -> java.util.Map.of(),
                        clock));
        handlers.add(port::close);
        add(spec, port, recording);
    }

    private void add(SubscriptionSpec spec, HandlerPort port, FunctionRecording recording) {
        SimulatedSubscription simulated = new SimulatedSubscription(
                spec, port, clock, metrics.forSubscription(spec.name()), this::publishDeadLetter);
        subscriptions.put(spec.name(), new TestSubscription(this, simulated, recording));
    }

    /** The subscription of that name. */
    public TestSubscription subscription(String name) {
        TestSubscription subscription = subscriptions.get(name);
        if (subscription == null) {
            throw new NoSuchElementException(
                    "no subscription '" + name + "'; the subscriptions are " + subscriptions.keySet());
        }
        return subscription;
    }

    /** The one subscription; fails when there are several. */
    public TestSubscription subscription() {
        if (subscriptions.size() != 1) {
            throw new IllegalStateException("there are " + subscriptions.size() + " subscriptions "
                    + subscriptions.keySet() + ": name one with subscription(name)");
        }
        return subscriptions.values().iterator().next();
    }

    /** Every subscription, in manifest order. */
    public List<TestSubscription> subscriptions() {
        return List.copyOf(subscriptions.values());
    }

    /** Publishes {@code value} to the one subscription's (first) topic and handles it: see {@link TestSubscription#send}. */
    public String send(Object value) {
        return subscription().send(value);
    }

    /** A message to the one subscription's (first) topic, to give a key, properties or an event time. */
    public TestMessage message(Object value) {
        return subscription().message(value);
    }

    /** What the one subscription's handler was handed, in order. */
    public List<Delivered> deliveries() {
        return subscription().deliveries();
    }

    /** What the one subscription sent to its dead-letter topic. */
    public List<DeadLetterMessage> deadLetters() {
        return subscription().deadLetters();
    }

    /** What the one subscription's function served and recorded; fails when it runs a handler. */
    public FunctionRecording function() {
        return subscription().function();
    }

    /**
     * Everything handlers and functions published, in order: a handler through {@code HandlerContext.publisher},
     * a function its return values and {@code context.publish}. Each is on its topic too ({@link #topicTexts}), so a
     * subscription of the manifest consuming it gets it.
     */
    public List<Published> outputs() {
        return List.copyOf(published);
    }

    /** What handlers and functions published to {@code topic} (a short name as in the manifest), in order. */
    public List<Published> outputs(String topic) {
        String name = TestMessage.qualified(topic);
        return published.stream().filter(p -> p.topic().equals(name)).toList();
    }

    /**
     * From now on every publish to {@code topic} fails, as a send the broker refuses: the delivery that published
     * is then not acknowledged and comes back after the failure backoff, counting toward {@code maxAttempts}.
     */
    public void failPublishesTo(String topic) {
        failingTopics.add(TestMessage.qualified(topic));
    }

    /** Publishes to {@code topic} are stored again. */
    public void acceptPublishesTo(String topic) {
        failingTopics.remove(TestMessage.qualified(topic));
    }

    boolean publishesFail(String topic) {
        return failingTopics.contains(topic);
    }

    /** A handler's or function's send, stored on its topic and recorded. */
    MessageId output(
            String subscription,
            String topic,
            Object value,
            byte[] data,
            String key,
            Map<String, String> properties,
            long eventTime,
            Schema<?> schema) {
        SimulatedMessage message = publish(topic, data, key, properties, eventTime, schema);
        published.add(new Published(
                subscription,
                topic,
                message.getMessageId().toString(),
                value,
                data.clone(),
                Optional.ofNullable(key),
                Map.copyOf(properties),
                eventTime > 0 ? Optional.of(Instant.ofEpochMilli(eventTime)) : Optional.empty()));
        return message.getMessageId();
    }

    /** What the subscription's handler or function published. */
    List<Published> outputsOf(String subscription) {
        return published.stream()
                .filter(p -> p.subscription().equals(subscription))
                .toList();
    }

    /**
     * Moves the clock on by {@code step}: every wait that comes due (a {@code retryAfter}, a failure backoff, an
     * ack timeout) runs at its time, in order, and what it brings back is handled before the next.
     */
    public void advance(Duration step) {
        checkOpen();
        // What was published and not yet handed over is handled now, before the clock moves.
        pump();
        clock.advance(step);
        pump();
    }

    /**
     * For a handler's call (or a fake of a dependency it calls): the call takes {@code duration} of the kit's time, as
     * {@code Thread.sleep} would take real time. The clock moves on while the call runs: each wait that comes due runs
     * at its time, and what it brings back is handed out once the call is over. The call's lease runs as in the
     * runtime: past its deadline ({@code handlerTimeout} from the call's start, or its last
     * {@code delivery.extend}) the call is given up at that time, its message settled as a {@code timeout} failure,
     * and this throws {@link InterruptedException} there, as the runtime's interrupt makes a blocking call throw.
     *
     * @param duration how long the call takes; zero or more, never {@code null}
     * @throws InterruptedException when the call's lease ended during it
     * @throws IllegalStateException when no handler call of a {@code concurrency: 1} subscription runs on this thread
     *     (the test moves the clock with {@link #advance}; calls side by side would share one clock)
     */
    public void sleep(Duration duration) throws InterruptedException {
        checkOpen();
        if (duration == null || duration.isNegative()) {
            throw new IllegalArgumentException(
                    "sleep(" + duration + "): pass how long the handler's call takes, zero or more");
        }
        Thread thread = Thread.currentThread();
        SimulatedSubscription calling = subscriptions.values().stream()
                .map(TestSubscription::simulated)
                .filter(subscription -> subscription.callDeadline(thread).isPresent())
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("sleep(" + duration + ") is for a handler's call, and"
                        + " none runs on this thread: the test moves the clock with advance(duration)"));
        if (calling.spec().concurrency() > 1) {
            throw new IllegalStateException("sleep(" + duration + ") refused: " + calling + " has concurrency "
                    + calling.spec().concurrency() + ", and calls side by side would move the kit's one clock each"
                    + " on their own; test a call's time with concurrency 1");
        }
        long end = clock.nanoTime() + Time.saturatedNanos(duration);
        boolean outer = !sleepingInCall;
        sleepingInCall = true;
        try {
            while (end - clock.nanoTime() > 0) {
                long now = clock.nanoTime();
                long deadline = calling.callDeadline(thread).orElse(Long.MAX_VALUE);
                // To the deadline first when it comes sooner: the call is given up exactly there.
                long until = deadline != Long.MAX_VALUE && deadline - now > 0 && deadline - end < 0 ? deadline : end;
                clock.advance(Duration.ofNanos(until - now));
                if (calling.expireOverdue() > 0) {
                    // As Thread.sleep: the interrupt is taken and thrown, not left set.
                    Thread.interrupted();
                    throw new InterruptedException("the handler's call on " + calling + " was given up at its deadline"
                            + " (handlerTimeout " + calling.spec().handlerTimeout() + ", or its last extend)");
                }
            }
        } finally {
            if (outer) {
                sleepingInCall = false;
            }
        }
    }

    /** How far the clock has moved since the driver was made. */
    public Duration elapsed() {
        return clock.elapsed();
    }

    /** The simulated wall clock: publish times and the delivery lag are read from it. */
    public Instant now() {
        return Instant.ofEpochMilli(clock.wallMillis());
    }

    /** Waits pending on the clock: held retries and backoffs, running ack timeouts. */
    public int pendingTimers() {
        return clock.pending();
    }

    /**
     * A value of the metrics the runtime would export at {@code /metrics}, such as
     * {@code metric("settle_outcomes_total", "subscription", "orders", "outcome", "retry")}: a counter's or a
     * gauge's value, a histogram's or a summary's count; 0 when the series does not exist.
     *
     * @param name the name as exported (a counter's with {@code _total})
     * @param labels label names and values, alternating
     */
    public double metric(String name, String... labels) {
        if (labels.length % 2 != 0) {
            throw new IllegalArgumentException("labels come in name, value pairs: " + List.of(labels));
        }
        String bare = name.endsWith("_total") ? name.substring(0, name.length() - "_total".length()) : name;
        Labels wanted = Labels.of(labels);
        for (MetricSnapshot snapshot : metrics.registry().scrape()) {
            String metric = snapshot.getMetadata().getPrometheusName();
            if (!metric.equals(bare) && !metric.equals(name)) {
                continue;
            }
            for (DataPointSnapshot point : snapshot.getDataPoints()) {
                if (!withoutEmpty(point.getLabels()).equals(wanted)) {
                    continue;
                }
                if (point instanceof CounterSnapshot.CounterDataPointSnapshot counter) {
                    return counter.getValue();
                } else if (point instanceof GaugeSnapshot.GaugeDataPointSnapshot gauge) {
                    return gauge.getValue();
                } else if (point instanceof HistogramSnapshot.HistogramDataPointSnapshot histogram) {
                    return histogram.getCount();
                } else if (point instanceof SummarySnapshot.SummaryDataPointSnapshot summary) {
                    return summary.getCount();
                }
            }
        }
        return 0;
    }

    /**
     * {@code labels} without those whose value is empty, which Prometheus reads as no label (such as
     * {@code settle_outcomes_total}'s {@code generation} when no canary ramp runs).
     */
    private static Labels withoutEmpty(Labels labels) {
        List<String> kept = new ArrayList<>();
        for (int i = 0; i < labels.size(); i++) {
            if (!labels.getValue(i).isEmpty()) {
                kept.add(labels.getName(i));
                kept.add(labels.getValue(i));
            }
        }
        return kept.size() == 2 * labels.size() ? labels : Labels.of(kept.toArray(String[]::new));
    }

    /** What {@code /metrics} would answer now, in the Prometheus text format. */
    public String metricsText() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.create().write(out, metrics.registry().scrape());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** The messages published to {@code topic} so far (by the test, or as dead letters), as text. */
    public synchronized List<String> topicTexts(String topic) {
        TopicLog log = topics.get(TestMessage.qualified(topic));
        return log == null
                ? List.of()
                : log.messages.stream()
                        .map(message -> new String(message.getData(), StandardCharsets.UTF_8))
                        .toList();
    }

    /**
     * Stops as the runtime does: held retries are abandoned (their messages stay unacknowledged), handlers are
     * closed, their class loaders too.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        subscriptions.values().forEach(TestSubscription::stop);
        clock.close();
        for (AutoCloseable handler : handlers) {
            try {
                handler.close();
            } catch (Exception e) {
                throw new IllegalStateException("a handler's close() threw", e);
            }
        }
        outputs.forEach(RecordingOutputs::close);
        if (deployment != null) {
            deployment.close();
        }
    }

    /** Publishes to {@code topic}: every subscription that consumes it gets the message. */
    synchronized SimulatedMessage publish(
            String topic,
            byte[] data,
            String key,
            Map<String, String> properties,
            long eventTime,
            Schema<?> writerSchema) {
        checkOpen();
        TopicLog log = topics.computeIfAbsent(topic, name -> new TopicLog(nextLedger++));
        // The client's own id type, so ids print, compare and key the duplicate guard as a broker's do.
        MessageId id = DefaultImplementation.getDefaultImplementation().newMessageId(log.ledger, log.nextEntry, -1);
        SimulatedMessage message = new SimulatedMessage(
                topic, id, data, key, properties, clock.wallMillis(), eventTime, log.nextEntry, 0, writerSchema);
        log.nextEntry++;
        log.messages.add(message);
        for (TestSubscription subscription : subscriptions.values()) {
            if (subscription.simulated().consumes(topic)) {
                subscription.simulated().published(message);
            }
        }
        return message;
    }

    private SimulatedMessage publishDeadLetter(
            String topic, SimulatedMessage original, Map<String, String> properties) {
        return publish(topic, original.getData(), original.getKey(), properties, 0, Schema.BYTES);
    }

    /** Hands every subscription what it can take now, until none can take more without the clock moving. */
    void pump() {
        boolean again = true;
        while (again) {
            again = false;
            for (TestSubscription subscription : subscriptions.values()) {
                int before = subscription.simulated().deliveries().size();
                subscription.simulated().pump();
                // A dead letter published to a topic consumed by an earlier subscription: go round again.
                again |= subscription.simulated().deliveries().size() != before && subscriptions.size() > 1;
            }
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the test driver is closed");
        }
    }
}
