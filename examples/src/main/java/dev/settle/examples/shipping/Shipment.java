package dev.settle.examples.shipping;

/**
 * What the shipping handler publishes for each order it accepts, as JSON.
 *
 * @param orderId the order shipped
 * @param sku what is shipped
 * @param parcels how many parcels: one per ten items, rounded up
 */
public record Shipment(String orderId, String sku, int parcels) {}
