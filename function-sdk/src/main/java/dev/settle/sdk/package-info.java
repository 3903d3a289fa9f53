/**
 * The Settle handler API: what a handler author compiles against.
 *
 * <p>A {@link dev.settle.sdk.Handler} receives one {@link dev.settle.sdk.Delivery} at a time and returns an
 * {@link dev.settle.sdk.Outcome}; the runtime turns that outcome into exactly one call on the Pulsar
 * consumer. This package uses JDK types only and has no dependencies: declare it in {@code provided} scope.
 *
 * @since 0.1
 */
package dev.settle.sdk;
