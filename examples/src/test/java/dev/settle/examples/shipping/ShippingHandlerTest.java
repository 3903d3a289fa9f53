package dev.settle.examples.shipping;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.examples.orders.Order;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import dev.settle.sdk.Publisher;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ShippingHandlerTest {
    private final List<Published> published = new ArrayList<>();
    private final ShippingHandler handler = new ShippingHandler();

    record Published(
            String topic, Delivery<?> delivery, Shipment shipment, String key, Map<String, String> properties) {}

    @BeforeEach
    void open() {
        handler.open(new HandlerContext() {
            @Override
            public String subscription() {
                return "shipping";
            }

            @Override
            public List<String> topics() {
                return List.of("persistent://public/default/orders");
            }

            @Override
            public Map<String, String> config() {
                return Map.of("shipmentsTopic", "persistent://public/default/shipments-test");
            }

            @Override
            @SuppressWarnings("unchecked")
            public <T> Publisher<T> publisher(String topic, Class<T> type) {
                assertThat(type).isEqualTo(Shipment.class);
                return (Publisher<T>) new Publisher<Shipment>() {
                    @Override
                    public String topic() {
                        return topic;
                    }

                    @Override
                    public void publish(Delivery<?> delivery, Shipment value) {
                        publish(delivery, value, null, Map.of());
                    }

                    @Override
                    public void publish(
                            Delivery<?> delivery, Shipment value, String key, Map<String, String> properties) {
                        published.add(new Published(topic, delivery, value, key, properties));
                    }
                };
            }
        });
    }

    @Test
    void aValidOrderPublishesItsShipmentForThisDeliveryAndAcknowledges() {
        Delivery<Order> delivery = delivery(new Order("o-1", "widget", 23));

        assertThat(handler.handle(delivery)).isSameAs(Outcome.ack());

        assertThat(published)
                .containsExactly(new Published(
                        "persistent://public/default/shipments-test",
                        delivery,
                        new Shipment("o-1", "widget", 3),
                        "o-1",
                        Map.of("source", "shipping")));
    }

    @Test
    void anInvalidOrderIsDroppedAndPublishesNothing() {
        assertThat(handler.handle(delivery(new Order("o-2", "widget", 0)))).isSameAs(Outcome.drop());
        assertThat(published).isEmpty();
    }

    private static Delivery<Order> delivery(Order order) {
        return new Delivery<>() {
            @Override
            public Order value() {
                return order;
            }

            @Override
            public byte[] data() {
                throw new UnsupportedOperationException();
            }

            @Override
            public Optional<String> key() {
                return Optional.of(order.id());
            }

            @Override
            public Map<String, String> properties() {
                return Map.of();
            }

            @Override
            public String topic() {
                return "persistent://public/default/orders";
            }

            @Override
            public String messageId() {
                return "1:2:-1:-1";
            }

            @Override
            public Instant publishTime() {
                return Instant.EPOCH;
            }

            @Override
            public int attempt() {
                return 1;
            }

            @Override
            public OptionalInt maxAttempts() {
                return OptionalInt.of(5);
            }
        };
    }
}
