package dev.settle.runtime.driver;

import dev.settle.runtime.deadletter.DelayCopy;
import dev.settle.runtime.deadletter.Origin;
import dev.settle.runtime.manifest.DurableDelays;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A subscription's durable delays ({@code durableDelays: true}, docs/concepts.md "Durable delays"): a wait of at least
 * {@code durableAfter} is kept on the delay topic rather than on the runtime's timer. A copy of the message ({@link
 * DelayCopy}: the original's payload, key, properties and event time, its origin and the attempts made) is published
 * there to be delivered when the wait ends, and the original is acknowledged once it is stored, or at exactly-once in
 * one transaction with it, as a dead letter is ({@link DeadLettering#committed}). A copy not stored leaves the wait to
 * the process, as without durable delays: nothing is lost. This departs from the settlement contract of
 * docs/design.md section 1 on purpose, and only where the manifest asks. Thread-safe.
 *
 * <p>Read back, the copy is the same message ({@link DelayCopy#attempt}, {@link #refusal}): its attempt is the one it
 * carries plus the broker's count of its own deliveries, and a copy whose origin is not one of the subscription's
 * topics is refused.
 *
 * @param <M> the message type the consumer calls take ({@code Message<?>} on a real consumer)
 */
final class DelayCopies<M> {
    private static final Logger log = LoggerFactory.getLogger(DelayCopies.class);

    /** Durable delays off: every wait is held in the process (the settlement contract). */
    @SuppressWarnings("rawtypes")
    private static final DelayCopies OFF = new DelayCopies<>();

    private final String subscription;
    private final Optional<DurableDelays> delays;
    private final DelayWriter<M> writer;
    /** The origin id of a message: a copy's carried one, else its own topic and id. */
    private final Function<M, String> originOf;
    /** A message's own properties, which its copy carries. */
    private final Function<M, Map<String, String>> propertiesOf;

    /** How a copy is written (as it is, or in a transaction of its own: exactly-once), counted while it is. */
    private final CopyWrites<M> writes;

    private final DriverMetrics metrics;
    private final Time time;
    /** The first refused copy is logged with its value; the rest are counted. */
    private final AtomicBoolean refusalLogged = new AtomicBoolean();

    private DelayCopies() {
        this.subscription = "";
        this.delays = Optional.empty();
        this.writer = null;
        this.originOf = null;
        this.propertiesOf = null;
        this.writes = null;
        this.metrics = null;
        this.time = null;
    }

    /**
     * {@code spec}'s durable delays, written through {@code writer} as {@code writes} say: at exactly-once each in a
     * transaction of its own with its original's acknowledgement, each a pending send until stored. Off ({@link #keeps}
     * always false) when {@code spec} does not turn them on or there is no writer.
     *
     * @param originOf the origin id of a message ({@link Origin#ofMessage}): a copy's carried one, else its own
     * @param propertiesOf a message's own properties
     */
    DelayCopies(
            SubscriptionSpec spec,
            DelayWriter<M> writer,
            Function<M, String> originOf,
            Function<M, Map<String, String>> propertiesOf,
            CopyWrites<M> writes,
            DriverMetrics metrics,
            Time time) {
        this.propertiesOf = propertiesOf;
        this.subscription = spec.name();
        this.delays = writer == null ? Optional.empty() : spec.retries().durableDelays();
        this.originOf = originOf;
        // Exactly-once: the copy and the original's acknowledgement commit together, in a transaction of their own (the
        // attempt's is aborted, so none of its outputs is read), or neither does.
        this.writer = writes.commits().delays(writer);
        this.writes = writes;
        this.metrics = metrics;
        this.time = time;
    }

    /** Durable delays off: {@link #keeps} is always false. */
    @SuppressWarnings("unchecked")
    static <M> DelayCopies<M> off() {
        return (DelayCopies<M>) OFF;
    }

    /** Whether a wait of {@code delay} is kept on the delay topic: on, and at least {@code durableAfter}. */
    boolean keeps(Duration delay) {
        return delays.isPresent() && delays.get().keeps(delay);
    }

    /**
     * Keeps {@code work}'s wait of {@code delay} on the delay topic, and tells {@code settle} what the settlement does
     * with the original: acknowledge it ({@code STORED}), nothing more ({@code COMMITTED}, {@code LEFT_TO_ITS_TWIN}),
     * or hold it in the process as before ({@code NOT_STORED}).
     */
    void keep(UnitOfWork<M> work, Duration delay, Consumer<DeadLettering.Stored> settle) {
        String origin = work.copyOf().orElseGet(() -> originOf.apply(work.message()));
        Map<String, String> properties =
                DelayCopy.properties(propertiesOf.apply(work.message()), origin, work.attempt());
        long deliverAt = time.currentTimeMillis() + delay.toMillis();
        writes.write(() -> writer.write(work, properties, deliverAt), (stored, error) -> {
            if (error == null) {
                metrics.durableDelayPublished();
                pendingUntil(delay);
                settle.accept(writes.commits().whenStored());
            } else if (writes.commits().leftToItsTwin(error)) {
                // Another copy of the message settled it or holds it in its transaction (see DeadLettering).
                settle.accept(DeadLettering.Stored.LEFT_TO_ITS_TWIN);
            } else {
                log.warn(
                        "subscription '{}': the delay copy of message {} was not stored; its wait of {} is held in the"
                                + " process instead (it does not survive a crash)",
                        subscription,
                        work.id(),
                        DurationText.format(delay),
                        error);
                settle.accept(DeadLettering.Stored.NOT_STORED);
            }
        });
    }

    /** The pending gauge counts this copy until its wait ends; a runtime stopping with its timer leaves it. */
    private void pendingUntil(Duration delay) {
        metrics.durableDelaysPendingChanged(1);
        try {
            time.schedule(delay, () -> metrics.durableDelaysPendingChanged(-1));
        } catch (RejectedExecutionException closing) {
            metrics.durableDelaysPendingChanged(-1);
        }
    }

    /**
     * Why a message read from the delay topic is refused; empty for one to handle. A refused one is counted, and the
     * first is logged with its value: the caller acknowledges it, since the delay topic is untrusted input.
     */
    Optional<String> refusal(String messageId, Map<String, String> copy, List<String> topics) {
        Optional<String> why = DelayCopy.refusal(copy, topics);
        if (why.isPresent()) {
            metrics.durableDelayRefused();
            if (refusalLogged.compareAndSet(false, true)) {
                log.warn(
                        "subscription '{}': message {} on the delay topic {} is refused and acknowledged, never handled:"
                                + " {}. Only Settle writes there; check who may produce to it. Further refusals are"
                                + " counted in settle_durable_delays_refused_total, not logged",
                        subscription,
                        messageId,
                        delays.map(DurableDelays::topic).orElse("?"),
                        why.get());
            }
        }
        return why;
    }

    /** Whether a message of {@code topic} was read from the delay topic (or a partition of it). */
    boolean fromDelayTopic(String topic) {
        if (delays.isEmpty()) {
            return false;
        }
        String delayTopic = delays.get().topic();
        return topic.equals(delayTopic) || topic.startsWith(delayTopic + "-partition-");
    }

    /** The stop's: waits up to {@code timeout} until no copy is being written; whether none is. */
    boolean awaitNone(Duration timeout) throws InterruptedException {
        return delays.isEmpty() || writes.awaitNone(timeout);
    }
}
