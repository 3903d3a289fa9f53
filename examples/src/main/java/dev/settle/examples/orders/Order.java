package dev.settle.examples.orders;

import java.util.Map;
import java.util.Set;

/**
 * One order, read from a flat JSON object such as {@code {"id": "o-1", "sku": "widget", "quantity": 3}}.
 *
 * @param id the order's id, not blank
 * @param sku the stock-keeping unit ordered, not blank
 * @param quantity how many, at least 1
 */
record Order(String id, String sku, int quantity) {

    private static final Set<String> MEMBERS = Set.of("id", "sku", "quantity");

    /** Reads an order; unknown members are refused too, so that a misspelt one is not silently ignored. */
    static Order parse(String json) throws MalformedOrderException {
        Map<String, String> members = FlatJson.parse(json);
        for (String name : members.keySet()) {
            if (!MEMBERS.contains(name)) {
                throw new MalformedOrderException("unknown member \"" + name + "\"; an order has id, sku and quantity");
            }
        }
        String id = text(members, "id");
        String sku = text(members, "sku");
        String quantity = text(members, "quantity");
        int count;
        try {
            count = Integer.parseInt(quantity);
        } catch (NumberFormatException e) {
            throw new MalformedOrderException("quantity must be a whole number, was " + quantity);
        }
        if (count < 1) {
            throw new MalformedOrderException("quantity must be at least 1, was " + count);
        }
        return new Order(id, sku, count);
    }

    private static String text(Map<String, String> members, String name) throws MalformedOrderException {
        String value = members.get(name);
        if (value == null || value.isBlank()) {
            throw new MalformedOrderException("missing \"" + name + "\"");
        }
        return value;
    }
}
