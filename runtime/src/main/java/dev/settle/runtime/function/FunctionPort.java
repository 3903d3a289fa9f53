package dev.settle.runtime.function;

import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.PayloadDecoder;
import dev.settle.runtime.driver.RecordFailedException;
import dev.settle.runtime.driver.UnitOfWork;
import dev.settle.runtime.isolation.ContextClassLoader;
import dev.settle.runtime.isolation.FunctionJarScan;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.LoadedFunction;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.manifest.WindowSettings;
import dev.settle.runtime.publish.Outputs;
import dev.settle.runtime.publish.Publishes;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.Outcome;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.functions.api.Record;
import org.apache.pulsar.functions.api.WindowFunction;
import org.slf4j.Logger;

/**
 * A Pulsar Function behind the driver's port, settled more strictly than Pulsar Functions settle it: the return
 * value is published to {@code output} (key and properties carried over from the input, as Functions do, and its event time, which
 * they do not), and the input is acknowledged only once that send and every {@code context.publish} or
 * {@code newOutputMessage(...).send} of the call is durable (the driver waits for the call's sends, with its
 * permit already given back); if any fails, the input is a failure and comes back. {@code null} (or a value with
 * no {@code output}) acknowledges; a throw is a failure; a returned {@code CompletableFuture} is settled when it
 * completes, holding its concurrency permit until then.
 */
public final class FunctionPort implements HandlerPort {
    private final LoadedFunction function;
    /**
     * {@link #toString()}, made once: the journal and tracing name the code of each settlement by it, so a string built
     * per call cost every settled message its making, and the journal its lookup as a new text (docs/trace.md).
     */
    private final String description;

    private final PayloadDecoder decoder;
    private final FunctionContext.Setup setup;
    private final Optional<Schema<?>> outputSchema;
    private final StateReader stateReader;
    /** Whether outputs carry {@code __pfn_input_topic__} and {@code __pfn_input_msg_id__}. */
    private final boolean inputProperties;
    /** Consumed topic to its SerDe; empty when the consumer's schema decodes. */
    private final Map<String, SerDeSchema> inputSerdes;
    /** The open windows of a windowed function ({@code windowConfig}); null for one called with each message. */
    private final Windows windows;

    private final Logger log;
    static final String INPUT_TOPIC = "__pfn_input_topic__";
    static final String INPUT_MESSAGE_ID = "__pfn_input_msg_id__";
    /** A partition's suffix: its messages name the partition, the manifest names the topic. */
    private static final java.util.regex.Pattern PARTITION = java.util.regex.Pattern.compile("-partition-\\d+$");

    private final AtomicBoolean droppedValueLogged = new AtomicBoolean();
    private final AtomicBoolean opened = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** Reads a function's state back from its topic, key to value, when the subscription opens. */
    @FunctionalInterface
    public interface StateReader {
        Map<String, byte[]> read(String topic) throws PulsarClientException;

        /** Reads with a TableView of {@code client}: the compacted part of the topic, then what came after. */
        static StateReader of(java.util.function.Supplier<org.apache.pulsar.client.api.PulsarClient> client) {
            return topic -> FunctionState.read(client.get(), topic);
        }
    }

    /**
     * What a function reaches outside itself through its {@code Context}, for its subscription's life.
     *
     * @param metrics where {@code context.recordMetric} goes: (name, value)
     * @param environment where secrets are read
     * @param logger what {@code context.getLogger()} returns, and where this port logs
     * @param state where the function's state ({@code state:} in the manifest) is read back from at open
     * @param time the clock a time window ({@code windowConfig}) fires by; may be null for a function without one
     */
    public record Surroundings(
            java.util.function.BiConsumer<String, Double> metrics,
            Function<String, String> environment,
            Logger logger,
            StateReader state,
            Time time) {}

    /**
     * @param function the function, loaded and not initialised
     * @param spec its subscription
     * @param outputs where outputs are sent
     * @param around what it reaches outside itself through its {@code Context}
     */
    public FunctionPort(LoadedFunction function, SubscriptionSpec spec, Outputs outputs, Surroundings around) {
        java.util.function.BiConsumer<String, Double> metrics = around.metrics();
        Function<String, String> environment = around.environment();
        Logger logger = around.logger();
        StateReader stateReader = around.state();
        Time time = around.time();
        this.function = function;
        this.description = "function " + function;
        this.stateReader = stateReader;
        Map<String, SerDeSchema> serdes = new LinkedHashMap<>();
        spec.function()
                .inputSerdes()
                .forEach((topic, serde) -> serdes.put(topic, SerDeSchema.create(serde, function.classLoader())));
        this.inputSerdes = Map.copyOf(serdes);
        Optional<WindowSettings> window = spec.function().window();
        if (window.isPresent() && function.windowInput().isEmpty()) {
            throw new IllegalArgumentException("function " + function.className() + " takes no window, and the"
                    + " manifest gives it windowConfig (settle validate refuses this)");
        }
        // With SerDes the consumer reads bytes, as Pulsar Functions' consumer does, and each topic's SerDe decodes; a
        // windowed function's consumer decodes the window's elements.
        this.decoder = PayloadDecoder.of(
                !inputSerdes.isEmpty()
                        ? byte[].class
                        : window.isPresent() ? function.windowInput().get() : function.inputType(),
                function.classLoader(),
                spec.handler().schema());
        // A function returning Void never publishes a return value: no producer for it (what it sends with
        // newOutputMessage or publish to the output topic brings its own schema).
        this.outputSchema = spec.function()
                .output()
                .filter(topic -> function.outputType() != Void.class)
                .map(topic -> spec.function()
                        .outputSerde()
                        .<Schema<?>>map(serde -> SerDeSchema.create(serde, function.classLoader()))
                        .orElseGet(() -> PayloadDecoder.forOutput(
                                function.outputType(),
                                function.classLoader(),
                                spec.function().outputSchema())));
        this.log = logger;
        this.setup = new FunctionContext.Setup(
                spec.name(),
                spec.topics().names(),
                spec.function().output(),
                outputSchema
                        .map(schema -> schema.getSchemaInfo().getType().name())
                        .orElse(null),
                Map.copyOf(new LinkedHashMap<String, Object>(spec.config())),
                spec.function().secrets(),
                environment,
                log,
                metrics::accept,
                outputs,
                function.version().orElse(""),
                spec.function().instanceId(),
                spec.function().numInstances(),
                spec.function().state().map(FunctionState::new).orElse(null));
        this.inputProperties = spec.function().inputProperties();
        this.windows = window.map(settings -> new Windows(spec.name(), settings, time, this::fireWindow, log))
                .orElse(null);
    }

    @Override
    public Schema<?> schema() {
        return decoder.schema();
    }

    /**
     * Reads the function's state back (when the manifest asks for state) and calls its {@code initialize}, once,
     * with a context that has no current record. The output's producer is opened by the subscription's start
     * ({@code PulsarOutputs.prepare}), so the output topic carries the function's schema from the start.
     */
    public void open() throws HandlerLoadException {
        if (!opened.compareAndSet(false, true)) {
            return;
        }
        if (setup.state() != null) {
            try {
                Map<String, byte[]> read = stateReader.read(setup.state().topic());
                setup.state().restore(read);
                log.info(
                        "subscription '{}': read {} state keys back from {}",
                        setup.subscription(),
                        read.size(),
                        setup.state().topic());
            } catch (PulsarClientException | RuntimeException e) {
                throw HandlerLoadException.initializeFailed(
                        function.jar(),
                        function.className(),
                        setup.subscription(),
                        new IllegalStateException(
                                "its state could not be read back from "
                                        + setup.state().topic(),
                                e));
            }
        }
        if (windows != null) {
            windows.start();
        }
        if (!function.pulsarFunction()) {
            return;
        }
        for (var call : function.unsupportedCalls()) {
            if (setup.state() != null && FunctionJarScan.STATE.contains(call.method())) {
                continue; // served from the state topic
            }
            log.warn(
                    "subscription '{}': function {} reaches {}, which calls Context.{}; Settle does not support it"
                            + " ({}), so a message whose call gets there fails with UnsupportedOperationException",
                    setup.subscription(),
                    function.className(),
                    String.join(", ", call.callers()),
                    call.method(),
                    call.advice());
        }
        FunctionContext context = new FunctionContext(setup, null, null);
        try (ContextClassLoader ignored = ContextClassLoader.swap(function.contextLoader())) {
            pulsarFunction().initialize(context);
            if (context.fatal() != null) {
                throw new IllegalStateException("initialize called context.fatal", context.fatal());
            }
        } catch (Exception | LinkageError e) {
            throw HandlerLoadException.initializeFailed(function.jar(), function.className(), setup.subscription(), e);
        }
    }

    /**
     * Calls the function's {@code close}, once, if it was opened; logs a failure and never throws. Then lets go of
     * its loader from its context class loader, which threads it started may still hold.
     */
    public void close() {
        try {
            if (windows != null) {
                windows.close();
            }
            if (!opened.get() || !closed.compareAndSet(false, true) || !function.pulsarFunction()) {
                return;
            }
            try (ContextClassLoader ignored = ContextClassLoader.swap(function.contextLoader())) {
                pulsarFunction().close();
            } catch (Exception | LinkageError e) {
                log.warn("function {} failed to close; stopping goes on", function.className(), e);
            }
        } finally {
            function.cutContextLoader();
        }
    }

    @SuppressWarnings("unchecked")
    private org.apache.pulsar.functions.api.Function<Object, Object> pulsarFunction() {
        return (org.apache.pulsar.functions.api.Function<Object, Object>) function.instance();
    }

    @Override
    @SuppressWarnings("unchecked")
    public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) throws Exception {
        Message<?> message = work.message();
        Object value = decoder.decode(message);
        Schema<?> schema = decoder.schema();
        // A delay copy is the same message: its record names, and its SerDe is chosen by, its original's topic.
        String inputTopic = work.copyOfTopic().orElseGet(message::getTopicName);
        if (!inputSerdes.isEmpty()) {
            String topic = PARTITION.matcher(inputTopic).replaceFirst("");
            SerDeSchema serde = inputSerdes.get(topic);
            if (serde == null) {
                throw new IllegalStateException("no SerDe for " + topic + " in inputSerdes " + inputSerdes.keySet());
            }
            value = serde.decode((byte[]) value);
            schema = serde;
        }
        InputRecord record = new InputRecord(message, inputTopic, value, schema);
        Publishes publishes = work.outputs(setup.outputs());
        if (windows != null) {
            // Acknowledged once the windows holding it are published (the driver waits for this as for a send).
            CompletableFuture<MessageId> windowed = new CompletableFuture<>();
            publishes.add(windowed);
            windows.add(record, windowed);
            return CompletableFuture.completedFuture(Outcome.ack());
        }
        Object result;
        FunctionContext context = new FunctionContext(setup, record, publishes);
        try (ContextClassLoader ignored = ContextClassLoader.swap(function.contextLoader())) {
            result = function.pulsarFunction()
                    ? pulsarFunction().process(value, context)
                    : ((Function<Object, Object>) function.instance()).apply(value);
        } catch (Exception | LinkageError e) {
            throwIfFatal(context);
            throw e;
        }
        throwIfFatal(context);
        if (result instanceof CompletionStage<?> pending) {
            return ((CompletionStage<Object>) pending).thenCompose(done -> {
                throwIfFatal(context);
                return settle(done, record, publishes);
            });
        }
        return settle(result, record, publishes);
    }

    private void throwIfFatal(FunctionContext context) {
        if (context.fatal() != null) {
            throw new FunctionFatalError(function.className(), context.fatal());
        }
    }

    /**
     * Publishes what the function returned; then acknowledges. The driver holds the acknowledgement until every send
     * of the call is durable (outputs are pipelined: the call's permit goes back at once).
     */
    private CompletableFuture<Outcome> settle(Object result, InputRecord record, Publishes publishes) {
        if (result != null) {
            publishResult(result, record, publishes);
        }
        return outcome(record);
    }

    private CompletableFuture<Outcome> outcome(InputRecord record) {
        if (record.failed()) {
            return CompletableFuture.failedFuture(new RecordFailedException("function " + function.className()
                    + " called fail() on message " + record.message().getMessageId()));
        }
        return CompletableFuture.completedFuture(Outcome.ack());
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void publishResult(Object result, InputRecord input, Publishes publishes) {
        Message<?> message = input.message();
        Optional<String> topic;
        Schema<?> schema;
        Object value;
        Record<?> output = result instanceof Record<?> r ? r : null;
        if (output != null) {
            // Built with context.newOutputRecordBuilder: its own topic, schema, key and properties.
            topic = output.getDestinationTopic().or(setup::outputTopic);
            schema = output.getSchema() != null ? output.getSchema() : outputSchema.orElse(null);
            value = output.getValue();
        } else {
            topic = setup.outputTopic();
            schema = outputSchema.orElse(null);
            value = result;
        }
        if (topic.isEmpty() || schema == null) {
            if (droppedValueLogged.compareAndSet(false, true)) {
                log.info(
                        "subscription '{}': function {} returned a value and the subscription has no output, so it"
                                + " is dropped; set output in the manifest to publish it. Said once per subscription",
                        setup.subscription(),
                        function.className());
            }
            return;
        }
        TypedMessageBuilder builder;
        try {
            builder = publishes.newMessage(topic.get(), (Schema) schema);
        } catch (PulsarClientException | RuntimeException e) {
            publishes.add(CompletableFuture.failedFuture(e));
            return;
        }
        builder.value(value);
        if (output != null) {
            output.getKey().ifPresent(builder::key);
            if (!output.getProperties().isEmpty()) {
                builder.properties(output.getProperties());
            }
            output.getEventTime().ifPresent(builder::eventTime);
        } else {
            if (message.hasKey()) {
                builder.key(message.getKey());
            }
            if (!message.getProperties().isEmpty()) {
                builder.properties(message.getProperties());
            }
            // Settle's choice: Pulsar Functions (LocalRunner 4.0.7) do not carry a Pulsar input's event time.
            if (message.getEventTime() > 0) {
                builder.eventTime(message.getEventTime());
            }
        }
        if (inputProperties) {
            // As Pulsar Functions' sink: downstream code finds the input by these (the id as MessageId.toByteArray).
            builder.property(INPUT_TOPIC, message.getTopicName());
            builder.property(
                    INPUT_MESSAGE_ID,
                    Base64.getEncoder().encodeToString(message.getMessageId().toByteArray()));
        }
        builder.sendAsync();
    }

    /**
     * Calls a windowed function with one window, as Functions' {@code WindowFunctionExecutor} does: a
     * {@code WindowFunction} gets the records and a {@code WindowContext}, a {@code java.util.function.Function} the
     * values; a returned value is published to {@code output} as {@code context.publish} would, with no key and no
     * properties (no one input is the window's). What the function publishes itself is awaited too.
     *
     * @return completes once the window's outputs are stored; exceptionally if the function threw or a send failed
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private CompletableFuture<Void> fireWindow(List<InputRecord> window) {
        Publishes publishes = new Publishes(setup.outputs());
        FunctionContext context = new FunctionContext(setup, null, publishes);
        Object result;
        try (ContextClassLoader ignored = ContextClassLoader.swap(function.contextLoader())) {
            if (function.windowFunction()) {
                result = ((WindowFunction<Object, Object>) function.instance())
                        .process((Collection) window, WindowContexts.of(context));
            } else {
                List<Object> values = new ArrayList<>(window.size());
                window.forEach(record -> values.add(record.getValue()));
                result = ((Function<Object, Object>) function.instance()).apply(values);
            }
        } catch (Exception | LinkageError e) {
            log.warn(
                    "subscription '{}': function {} failed on a window of {} messages; they come back",
                    setup.subscription(),
                    function.className(),
                    window.size(),
                    e);
            return CompletableFuture.failedFuture(e);
        }
        if (context.fatal() != null) {
            // Called on its own, not within one message's call: its messages fail and come back.
            log.error(
                    "subscription '{}': function {} called context.fatal on a window of {} messages; they come back",
                    setup.subscription(),
                    function.className(),
                    window.size(),
                    context.fatal());
            return CompletableFuture.failedFuture(context.fatal());
        }
        if (result != null && setup.outputTopic().isPresent() && outputSchema.isPresent()) {
            try {
                publishes
                        .newMessage(setup.outputTopic().get(), (Schema) outputSchema.get())
                        .value(result)
                        .sendAsync();
            } catch (PulsarClientException | RuntimeException e) {
                publishes.add(CompletableFuture.failedFuture(e));
            }
        }
        return publishes.durable();
    }

    /**
     * A stop of the subscription begins: a windowed function lets go of its open windows, whose messages stay
     * unacknowledged and come back (docs/functions.md, "Windows"); nothing for other functions.
     */
    public void stopping() {
        if (windows != null) {
            windows.stopping();
        }
    }

    /** The stop is over; the subscription may start again (a reload's restart). */
    public void stopped() {
        if (windows != null) {
            windows.resume();
        }
    }

    /** The schema return values are published with to {@code output}; empty without an output. */
    public Optional<Schema<?>> outputSchema() {
        return outputSchema;
    }

    /** The function as loaded, for logs and {@code validate}. */
    public LoadedFunction function() {
        return function;
    }

    @Override
    public String toString() {
        return description;
    }
}
