package dev.settle.examples.orders;

import java.util.Optional;

/**
 * One order, as producers publish it with {@code Schema.JSON(Order.class)}: {@code {"id": "o-1", "sku": "widget",
 * "quantity": 3}}. The runtime decodes each message into an {@code Order} before the handler sees it (the handler
 * is a {@code Handler<Order>}, so the subscription's schema is Pulsar's JSON schema of this record).
 *
 * <p>Public because it is the message type: a producer application shares it, and Pulsar's JSON schema reads its
 * fields.
 *
 * @param id the order's id; an order needs one
 * @param sku the stock-keeping unit ordered; an order needs one
 * @param quantity how many, at least 1
 */
public record Order(String id, String sku, int quantity) {

    /**
     * What makes this order one the warehouse cannot take, whatever the attempt: JSON that decodes can still lack a
     * member (a missing text member is {@code null}, a missing number 0) or hold a value no order can have.
     *
     * @return the first problem, in words, or empty for an order the handler can process
     */
    public Optional<String> problem() {
        if (id == null || id.isBlank()) {
            return Optional.of("\"id\" is missing");
        }
        if (sku == null || sku.isBlank()) {
            return Optional.of("\"sku\" is missing");
        }
        if (quantity < 1) {
            return Optional.of("\"quantity\" must be at least 1, was " + quantity);
        }
        return Optional.empty();
    }
}
