package dev.settle.runtime.driver;

import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import dev.settle.sdk.BatchHandler;
import dev.settle.sdk.BatchResult;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.Outcome;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An SDK {@link BatchHandler} behind the batch port: decodes each payload with the subscription's schema (one that
 * cannot be decoded fails alone and is left out of the call), wraps each message as a {@link PulsarDelivery}, calls
 * the handler once, and reads its {@link BatchResult} by the identity of the deliveries it was given. A result that
 * names a delivery not in the call, or one delivery twice, is refused: every delivery of the call fails with a
 * {@link BatchResultRefusedException}, and one line names the handler.
 *
 * <p>At exactly-once, what the handler publishes for a delivery is held until the call's result is known, and sent
 * (in the delivery's transaction, which commits it with its acknowledgement) only for a delivery whose outcome is ack
 * or drop: a delivery that comes back, or a call that throws, commits no output ({@link HeldSends}).
 */
public final class SdkBatchPort implements BatchPort {
    private static final Logger log = LoggerFactory.getLogger(SdkBatchPort.class);

    private final Call call;
    private final PayloadDecoder decoder;
    private final OptionalInt maxAttempts;
    private final String description;
    /** Whether publishes are held until each delivery's outcome is known: exactly-once. */
    private final boolean holdOutputs;

    /** How the port calls the handler: a loaded handler swaps in its own context class loader around the call. */
    @FunctionalInterface
    public interface Call {
        BatchResult handle(List<Delivery<Object>> batch) throws Exception;
    }

    SdkBatchPort(Call call, PayloadDecoder decoder, OptionalInt maxAttempts, String description) {
        this(call, decoder, maxAttempts, description, false);
    }

    /** @param holdOutputs whether publishes are held until each delivery's outcome is known (exactly-once) */
    SdkBatchPort(Call call, PayloadDecoder decoder, OptionalInt maxAttempts, String description, boolean holdOutputs) {
        this.call = call;
        this.decoder = decoder;
        this.maxAttempts = maxAttempts;
        this.description = description;
        this.holdOutputs = holdOutputs;
    }

    private static boolean holdsOutputs(SubscriptionSpec spec) {
        return spec.guarantee() == Guarantee.EXACTLY_ONCE;
    }

    /** The port of a batch handler loaded from its JAR, for one subscription; its calls run in its own loader. */
    public static SdkBatchPort of(LoadedHandler loaded, SubscriptionSpec spec) {
        return new SdkBatchPort(
                loaded::handleBatch,
                PayloadDecoder.of(loaded, spec),
                SdkHandlerPort.maxAttempts(spec),
                loaded.className(),
                holdsOutputs(spec));
    }

    /**
     * The port of a batch handler swapped in while the consumer stays open (docs/live-code.md): as
     * {@code SdkHandlerPort.swappedIn}, it decodes each payload with its own schema, so the handler gets instances of
     * its own classes.
     */
    public static SdkBatchPort swappedIn(LoadedHandler loaded, SubscriptionSpec spec) {
        return new SdkBatchPort(
                loaded::handleBatch,
                PayloadDecoder.of(loaded, spec).withOwnSchema(),
                SdkHandlerPort.maxAttempts(spec),
                loaded.className(),
                holdsOutputs(spec));
    }

    /** The port of a batch handler on the runtime's own class path (tests, embedded use). */
    @SuppressWarnings("unchecked")
    public static <T> SdkBatchPort of(BatchHandler<T> handler, Class<T> messageType, SubscriptionSpec spec) {
        BatchHandler<Object> untyped = (BatchHandler<Object>) handler;
        return new SdkBatchPort(
                untyped::handle,
                PayloadDecoder.of(
                        messageType,
                        handler.getClass().getClassLoader(),
                        spec.handler().schema()),
                SdkHandlerPort.maxAttempts(spec),
                handler.getClass().getName(),
                holdsOutputs(spec));
    }

    /**
     * This batch handler behind the driver's port of one delivery for {@code spec}'s subscription: deliveries gathered
     * up to its {@code batch:} limits, {@code concurrency} batches in flight ({@link BatchGathering}).
     */
    public HandlerPort gathered(SubscriptionSpec spec, Time time, DriverMetrics metrics) {
        return BatchGathering.of(spec, this, time, metrics);
    }

    /**
     * This batch handler gathered as the batch handler {@code running} gathers (its clock and metrics), to be swapped
     * in for it: a new gathering, so the batch open on {@code running} when the swap begins is called there, on the
     * old generation, and its deliveries' permits come back to the swap as they settle; no batch holds deliveries of
     * two generations.
     *
     * @throws IllegalArgumentException when {@code running} is not a batch handler's port: the driver's in-flight
     *     limit was sized for one message per call when its consumer started
     */
    public HandlerPort gatheredAfter(HandlerPort running, SubscriptionSpec spec) {
        if (!(running instanceof BatchGathering gathering)) {
            throw new IllegalArgumentException("batch handler " + description + " cannot replace " + running
                    + " on subscription '" + spec.name() + "', which takes one message per call: "
                    + BatchGathering.SHAPE_FIXED_AT_START);
        }
        return gathering.next(spec, this);
    }

    /** Whether {@code port} gathers a batch handler's deliveries (a port of {@link #gathered}). */
    public static boolean gathers(HandlerPort port) {
        return port instanceof BatchGathering;
    }

    @Override
    public Schema<?> schema() {
        return decoder.schema();
    }

    @Override
    public List<BatchAnswer> call(List<UnitOfWork<Message<?>>> batch) throws Exception {
        BatchAnswer[] answers = new BatchAnswer[batch.size()];
        List<Delivery<Object>> deliveries = new ArrayList<>(batch.size());
        // Where each delivery handed to the handler stands in the batch, by identity: the result names deliveries by
        // the objects the handler was given.
        Map<Delivery<?>, Integer> positions = new IdentityHashMap<>();
        HeldSends[] held = holdOutputs ? new HeldSends[batch.size()] : null;
        for (int i = 0; i < batch.size(); i++) {
            UnitOfWork<Message<?>> work = batch.get(i);
            try {
                if (held != null) {
                    held[i] = new HeldSends();
                }
                Delivery<Object> delivery = new PulsarDelivery<>(
                        work, decoder.decode(work.message()), maxAttempts, held == null ? null : held[i]);
                deliveries.add(delivery);
                positions.put(delivery, i);
            } catch (PayloadDecodeException undecodable) {
                answers[i] = BatchAnswer.failed(undecodable);
            }
        }
        if (deliveries.isEmpty()) {
            return Arrays.asList(answers);
        }
        BatchResult result = call.handle(Collections.unmodifiableList(deliveries));
        String refused = result == null
                ? "returned null, which names no outcome; return BatchResult.create() with an outcome per delivery,"
                        + " or BatchResult.acknowledgeAll(batch)"
                : read(result, positions, answers);
        if (refused != null) {
            log.error(
                    "batch handler {} {}: the call fails for each of its {} messages (each counted a failed attempt)",
                    description,
                    refused,
                    deliveries.size());
            BatchResultRefusedException failure =
                    new BatchResultRefusedException("batch handler " + description + " " + refused);
            for (int at : positions.values()) {
                answers[at] = BatchAnswer.failed(failure);
            }
            return Arrays.asList(answers);
        }
        for (int at : positions.values()) {
            if (answers[at] == null) {
                answers[at] = BatchAnswer.none();
            }
        }
        if (held != null) {
            // In the batch's order, so a key's outputs are sent in its messages' order. Before the outcomes complete:
            // the settlement then waits for these sends and commits them with the acknowledgement. The other
            // deliveries' held sends are dropped with this call.
            for (int at = 0; at < held.length; at++) {
                if (SettlementStrategy.acknowledges(answers[at].outcome())) {
                    held[at].send(batch.get(at));
                }
            }
        }
        return Arrays.asList(answers);
    }

    /** Puts the result's outcomes in {@code answers}; what is wrong with it, or null when nothing is. */
    private static String read(BatchResult result, Map<Delivery<?>, Integer> positions, BatchAnswer[] answers) {
        for (BatchResult.Entry entry : result.entries()) {
            Integer at = positions.get(entry.delivery());
            if (at == null) {
                return "gave an outcome (" + name(entry.outcome()) + ") for a delivery not in this call (message "
                        + entry.delivery().messageId() + "); give outcomes only to the deliveries of the batch it was"
                        + " handed";
            }
            if (answers[at] != null) {
                return "gave message " + entry.delivery().messageId() + " two outcomes (" + name(answers[at].outcome())
                        + ", then " + name(entry.outcome()) + "); give each delivery one";
            }
            answers[at] = BatchAnswer.of(entry.outcome());
        }
        return null;
    }

    private static String name(Outcome outcome) {
        return outcome instanceof Outcome.RetryAfter delayed
                ? "retryAfter " + delayed.delay()
                : outcome.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public String toString() {
        return description;
    }
}
