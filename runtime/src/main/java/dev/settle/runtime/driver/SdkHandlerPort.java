package dev.settle.runtime.driver;

import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.SchemaKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.Outcome;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;

/**
 * An SDK {@link Handler} behind the driver's port: decodes the payload with the subscription's schema, wraps the
 * message as a {@link PulsarDelivery}, and calls the handler.
 */
public final class SdkHandlerPort implements HandlerPort {
    /** The usual answers, completed once: a no-op handler's call allocates no stage. Nothing completes them again. */
    private static final CompletableFuture<Outcome> ACKED = CompletableFuture.completedFuture(Outcome.ack());

    private static final CompletableFuture<Outcome> DROPPED = CompletableFuture.completedFuture(Outcome.drop());
    private static final CompletableFuture<Outcome> RETRIED = CompletableFuture.completedFuture(Outcome.retry());

    private final Call call;
    private final PayloadDecoder decoder;
    private final OptionalInt maxAttempts;
    private final String description;

    /** How the port calls the handler: a loaded handler swaps in its own context class loader around the call. */
    @FunctionalInterface
    public interface Call {
        Outcome handle(Delivery<Object> delivery) throws Exception;
    }

    /**
     * @param call calls the handler
     * @param messageType the handler's type argument
     * @param classLoader the loader of {@code messageType}, the context class loader while the schema is built
     * @param schemaOverride the manifest's {@code schema}, if any
     * @param maxAttempts the subscription's cap, shown to the handler
     * @param description names the handler in logs
     */
    public SdkHandlerPort(
            Call call,
            Class<?> messageType,
            ClassLoader classLoader,
            Optional<SchemaKind> schemaOverride,
            OptionalInt maxAttempts,
            String description) {
        this(call, PayloadDecoder.of(messageType, classLoader, schemaOverride), maxAttempts, description);
    }

    private SdkHandlerPort(Call call, PayloadDecoder decoder, OptionalInt maxAttempts, String description) {
        this.call = call;
        this.maxAttempts = maxAttempts;
        this.description = description;
        this.decoder = decoder;
    }

    /** The port of a handler loaded from its JAR, for one subscription. */
    public static SdkHandlerPort of(LoadedHandler loaded, SubscriptionSpec spec) {
        refuseBatch(loaded);
        return new SdkHandlerPort(
                loaded::handle,
                loaded.messageType(),
                loaded.classLoader(),
                spec.handler().schema(),
                maxAttempts(spec),
                loaded.className());
    }

    /**
     * The port of a handler swapped in while the consumer stays open (docs/live-code.md). The consumer decodes with
     * the schema of the handler it was subscribed for, whose classes are another loader's: this port decodes each
     * payload with its own schema instead, so the handler gets instances of its own classes. Avro payloads are read
     * with the handler's schema as the writer's.
     */
    public static SdkHandlerPort swappedIn(LoadedHandler loaded, SubscriptionSpec spec) {
        refuseBatch(loaded);
        return new SdkHandlerPort(
                loaded::handle, PayloadDecoder.of(loaded, spec).withOwnSchema(), maxAttempts(spec), loaded.className());
    }

    /**
     * A batch handler behind this port would fail every message it was handed: it goes behind {@link SdkBatchPort}
     * instead (issue 47), swapped in with {@link SdkBatchPort#swappedIn} and {@link SdkBatchPort#gatheredAfter}.
     */
    private static void refuseBatch(LoadedHandler loaded) {
        if (loaded.isBatch()) {
            throw new IllegalArgumentException("handler " + loaded.className() + " is a BatchHandler: it runs behind"
                    + " SdkBatchPort, called with many messages at once, not behind a port of one message; open it"
                    + " with PortChain.handler(handler, spec, outputs, time, metrics), or write it as a Handler");
        }
    }

    /** The port of a handler on the runtime's own class path (tests, embedded use). */
    @SuppressWarnings("unchecked")
    public static <T> SdkHandlerPort of(Handler<T> handler, Class<T> messageType, SubscriptionSpec spec) {
        Handler<Object> untyped = (Handler<Object>) handler;
        return new SdkHandlerPort(
                untyped::handle,
                messageType,
                handler.getClass().getClassLoader(),
                spec.handler().schema(),
                maxAttempts(spec),
                handler.getClass().getName());
    }

    @Override
    public SdkHandlerPort named(String name) {
        return new SdkHandlerPort(call, decoder, maxAttempts, name);
    }

    /** The cap of {@code spec}'s subscription, shown to the handler; empty without one. */
    static OptionalInt maxAttempts(SubscriptionSpec spec) {
        return spec.deadLetter()
                .map(deadLetter -> OptionalInt.of(deadLetter.maxAttempts()))
                .orElse(OptionalInt.empty());
    }

    @Override
    public Schema<?> schema() {
        return decoder.schema();
    }

    @Override
    public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) throws Exception {
        Message<?> message = work.message();
        Object value = decoder.decode(message);
        // What the handler published is waited for by the driver before an acknowledgement (Processing), with the
        // call's permit given back already: outputs are pipelined.
        return completed(call.handle(new PulsarDelivery<>(work, value, maxAttempts)));
    }

    private static CompletableFuture<Outcome> completed(Outcome outcome) {
        if (outcome == ACKED.getNow(null)) {
            return ACKED;
        } else if (outcome == DROPPED.getNow(null)) {
            return DROPPED;
        } else if (outcome == RETRIED.getNow(null)) {
            return RETRIED;
        }
        return CompletableFuture.completedFuture(outcome);
    }

    @Override
    public String toString() {
        return description;
    }
}
