/**
 * One driver per subscription: receive, call the handler, and turn its outcome into exactly one consumer call.
 *
 * <p>{@link dev.settle.runtime.driver.SubscriptionDriver} owns the consumer ({@code ConsumerSettings} is the one
 * place its options are set) and reaches the handler only through {@link dev.settle.runtime.driver.HandlerPort}
 * ({@link dev.settle.runtime.driver.SdkHandlerPort} for SDK handlers). {@code Settlement} is the one outcome to
 * consumer-call mapping; it waits on the runtime's {@link dev.settle.runtime.time.Time}, never a thread of its
 * own. What a driver reports goes to {@link dev.settle.runtime.driver.DriverMetrics}, implemented elsewhere.
 * Uses the manifest, isolation and time packages.
 */
package dev.settle.runtime.driver;
