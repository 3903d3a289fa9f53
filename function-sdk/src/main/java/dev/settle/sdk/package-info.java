/**
 * The Settle handler API: what a handler author compiles against.
 *
 * <p>A {@link dev.settle.sdk.Handler} receives one {@link dev.settle.sdk.Delivery} at a time and returns an
 * {@link dev.settle.sdk.Outcome}; the runtime turns that outcome into exactly one call on the Pulsar
 * consumer. A handler may publish through a {@link dev.settle.sdk.Publisher} it obtains from its
 * {@link dev.settle.sdk.HandlerContext}: a delivery's acknowledgement then waits until what it published is stored.
 * A {@link dev.settle.sdk.BatchHandler} receives many deliveries in one call and returns a
 * {@link dev.settle.sdk.BatchResult}, an outcome for each.
 * This package uses JDK types only and has no dependencies: declare it in {@code provided} scope.
 *
 * <p><b>Supported API</b>, every type of it: kept stable across releases (docs/design.md, "The supported API").
 *
 * @since 0.1
 */
package dev.settle.sdk;
