package dev.settle.examples.shipping;

import dev.settle.examples.orders.Order;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import dev.settle.sdk.Publisher;
import java.util.Map;

/**
 * Turns each valid order into a {@link Shipment} on the shipments topic ({@code config.shipmentsTopic}). The
 * order is acknowledged only once its shipment is stored by the broker: if the shipments topic refuses it, the
 * order comes back (the failure backoff, then the dead-letter topic) instead of being lost. An invalid order is
 * dropped and publishes nothing.
 */
public final class ShippingHandler implements Handler<Order> {
    private Publisher<Shipment> shipments;

    @Override
    public void open(HandlerContext context) {
        shipments = context.publisher(
                context.config().getOrDefault("shipmentsTopic", "persistent://public/default/shipments"),
                Shipment.class);
    }

    @Override
    public Outcome handle(Delivery<Order> delivery) {
        Order order = delivery.value();
        if (order.problem().isPresent()) {
            return Outcome.drop();
        }
        int parcels = (order.quantity() + 9) / 10;
        shipments.publish(
                delivery, new Shipment(order.id(), order.sku(), parcels), order.id(), Map.of("source", "shipping"));
        // Held back by the runtime until the shipment above is durable.
        return Outcome.ack();
    }
}
