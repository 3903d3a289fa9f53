package dev.settle.runtime.driver;

import dev.settle.runtime.deadletter.DelayCopy;
import dev.settle.runtime.deadletter.Origin;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Outcome;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A received message's way into {@link Processing}, before the pipeline's slots: the unit of work it becomes (a
 * durable-delay copy on the attempt it carries, named by its original), and the messages kept from the handler there,
 * acknowledged when they must be: a delay-topic message the subscription refuses (untrusted input) and a broker's
 * repeat of a copy in hand or acknowledged ({@link Repeats}). Thread-safe.
 */
final class Intake {
    /** The driver's logger, as {@link Processing}'s: a repeat's line stands with the settled lines of its message. */
    private static final Logger log = LoggerFactory.getLogger(SubscriptionDriver.class);

    private final SubscriptionSpec spec;
    private final DelayCopies<Message<?>> delays;
    private final Repeats repeats;
    private final Settlement<Message<?>> settlement;
    private final DriverMetrics metrics;
    /** Copies kept from the handler while their twin was in hand ({@link DuplicateGuard.Verdict#IN_FLIGHT}). */
    private final AtomicLong leftToTwins = new AtomicLong();

    Intake(
            SubscriptionSpec spec,
            DelayCopies<Message<?>> delays,
            Repeats repeats,
            Settlement<Message<?>> settlement,
            DriverMetrics metrics) {
        this.spec = spec;
        this.delays = delays;
        this.repeats = repeats;
        this.settlement = settlement;
        this.metrics = metrics;
    }

    /**
     * Whether {@code message} came from the delay topic and is refused there ({@link DelayCopies#refusal}: counted,
     * the first logged): the caller {@link #acknowledge}s it, so it is neither handled nor sent round again.
     */
    boolean refused(Message<?> message) {
        return delays.fromDelayTopic(message.getTopicName())
                && delays.refusal(
                                message.getMessageId().toString(),
                                message.getProperties(),
                                spec.topics().names())
                        .isPresent();
    }

    /** Acknowledges {@code message} without handling it. */
    void acknowledge(Message<?> message, long receivedNanos) {
        settlement.apply(work(message, receivedNanos), Outcome.ack());
    }

    /** How many copies were left alone because their twin was in hand: that twin's settlement settles them. */
    long leftToTwins() {
        return leftToTwins.get();
    }

    /** The door's verdict on a received copy; {@code HANDLE} must be followed by {@link Repeats#finished}. */
    DuplicateGuard.Verdict admit(Message<?> message) {
        return repeats.admit(message);
    }

    /** A second copy of a delivery in hand or acknowledged: the handler never sees it. */
    void skipRepeat(Message<?> message, DuplicateGuard.Verdict verdict, long receivedNanos) {
        metrics.duplicateSuppressed();
        if (verdict == DuplicateGuard.Verdict.IN_FLIGHT) {
            leftToTwins.incrementAndGet();
        }
        if (verdict == DuplicateGuard.Verdict.ACKED) {
            acknowledge(message, receivedNanos);
        }
        log.debug(
                "subscription '{}': message {} attempt {} arrived again ({}); not handed to the handler twice",
                spec.name(),
                message.getMessageId(),
                message.getRedeliveryCount() + 1,
                verdict);
    }

    /** The unit of work {@code message} is: its attempt, whether it came in a batch, and what it is a copy of. */
    UnitOfWork<Message<?>> work(Message<?> message, long receivedNanos) {
        boolean batched = message.getMessageId() instanceof MessageIdAdv id && id.getBatchSize() > 1;
        if (delays.fromDelayTopic(message.getTopicName())) {
            // A delay copy is the same message: on the attempt it carries, named by its original.
            UnitOfWork<Message<?>> copy = new UnitOfWork<>(
                    message,
                    message.getMessageId(),
                    DelayCopy.attempt(message.getProperties(), message.getRedeliveryCount()),
                    batched,
                    receivedNanos);
            // Refused before it is handled (refused) unless its origin names one of the subscription's topics.
            String origin = message.getProperty(Origin.PROPERTY);
            if (origin != null && origin.indexOf('@') > 0) {
                copy.copyOf(origin);
            }
            return copy;
        }
        return new UnitOfWork<>(
                message, message.getMessageId(), message.getRedeliveryCount() + 1, batched, receivedNanos);
    }
}
