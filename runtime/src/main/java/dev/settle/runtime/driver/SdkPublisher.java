package dev.settle.runtime.driver;

import dev.settle.runtime.publish.Outputs;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.Publisher;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * The SDK's {@link Publisher} on {@link Outputs}: each send is added to the sends of the delivery it is made for,
 * which {@link SdkHandlerPort} waits for before an ack. A producer that cannot be had counts as a failed send, so
 * the delivery is retried even when the handler catches nothing.
 */
public final class SdkPublisher<T> implements Publisher<T> {
    private final String topic;
    private final Schema<T> schema;
    private final Outputs outputs;

    /**
     * @param topic where values go
     * @param type the values' type: its schema is STRING, BYTES or JSON ({@link PayloadDecoder#forOutput})
     * @param classLoader the loader of {@code type}
     * @param outputs where the messages are made
     */
    @SuppressWarnings("unchecked")
    public SdkPublisher(String topic, Class<T> type, ClassLoader classLoader, Outputs outputs) {
        this.topic = Objects.requireNonNull(topic, "topic");
        this.schema = (Schema<T>) PayloadDecoder.forOutput(type, classLoader, java.util.Optional.empty());
        this.outputs = Objects.requireNonNull(outputs, "outputs");
    }

    @Override
    public String topic() {
        return topic;
    }

    @Override
    public void publish(Delivery<?> delivery, T value) {
        Objects.requireNonNull(delivery, "delivery");
        publish(delivery, value, delivery.key().orElse(null), Map.of());
    }

    @Override
    public void publish(Delivery<?> delivery, T value, String key, Map<String, String> properties) {
        Objects.requireNonNull(delivery, "delivery");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(properties, "properties");
        if (!(delivery instanceof PulsarDelivery<?> handled)) {
            throw new IllegalArgumentException("publish with the delivery the runtime handed to handle(), not "
                    + delivery.getClass().getName());
        }
        var publishes = handled.publishes(outputs);
        TypedMessageBuilder<T> message;
        try {
            message = publishes.newMessage(topic, schema);
        } catch (PulsarClientException | RuntimeException e) {
            publishes.add(CompletableFuture.failedFuture(e));
            return;
        }
        message.value(value);
        if (key != null) {
            message.key(key);
        }
        if (!properties.isEmpty()) {
            message.properties(properties);
        }
        message.sendAsync();
    }

    @Override
    public String toString() {
        return "publisher to " + topic;
    }
}
