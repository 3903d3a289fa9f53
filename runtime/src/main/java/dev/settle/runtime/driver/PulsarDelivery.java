package dev.settle.runtime.driver;

import dev.settle.runtime.publish.Outputs;
import dev.settle.runtime.publish.Publishes;
import dev.settle.sdk.Delivery;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.apache.pulsar.client.api.Message;

/** A Pulsar {@link Message} as the SDK's {@link Delivery}; the value is decoded before the handler is called. */
final class PulsarDelivery<T> implements Delivery<T> {
    private final UnitOfWork<Message<?>> work;
    private final Message<?> message;
    private final T value;
    private final OptionalInt maxAttempts;
    /** Where its publishes are held until its outcome is known (a batch handler at exactly-once); null: sent. */
    private final HeldSends held;

    PulsarDelivery(UnitOfWork<Message<?>> work, T value, OptionalInt maxAttempts) {
        this(work, value, maxAttempts, null);
    }

    /** @param held where its publishes are held until its outcome is known; null to send them at once */
    PulsarDelivery(UnitOfWork<Message<?>> work, T value, OptionalInt maxAttempts, HeldSends held) {
        this.work = work;
        this.message = work.message();
        this.value = value;
        this.maxAttempts = maxAttempts;
        this.held = held;
    }

    /** The sends of this delivery, made through the unit of work on the first publish (or held there). */
    Publishes publishes(Outputs outputs) {
        return held == null ? work.outputs(outputs) : held.publishes(outputs);
    }

    Message<?> message() {
        return message;
    }

    @Override
    public T value() {
        return value;
    }

    @Override
    public byte[] data() {
        // getData() hands out the client's own array for some messages: the handler gets a copy it may keep.
        return message.getData().clone();
    }

    @Override
    public Optional<String> key() {
        return message.hasKey() ? Optional.of(message.getKey()) : Optional.empty();
    }

    @Override
    public Map<String, String> properties() {
        return message.getProperties();
    }

    @Override
    public String topic() {
        // A delay copy is the same message: it names the topic its original came from.
        return work.copyOfTopic().orElseGet(message::getTopicName);
    }

    @Override
    public String messageId() {
        return message.getMessageId().toString();
    }

    @Override
    public Instant publishTime() {
        return Instant.ofEpochMilli(message.getPublishTime());
    }

    @Override
    public int attempt() {
        // The broker's count, or a delay copy's carried on it.
        return work.attempt();
    }

    @Override
    public OptionalInt maxAttempts() {
        return maxAttempts;
    }

    @Override
    public Map<String, String> traceContext() {
        Tracing.Handling trace = work.trace();
        return trace == null ? Map.of() : trace.context();
    }

    @Override
    public void extend(Duration duration) {
        work.lease().extend(duration);
    }

    @Override
    public String toString() {
        return "Delivery[" + message.getTopicName() + " " + message.getMessageId() + " attempt " + attempt() + "]";
    }
}
