/**
 * What an operator sees of a running Settle: Prometheus metrics, {@code /livez}, {@code /readyz} and the log format.
 *
 * <p>{@link dev.settle.runtime.observe.SettleMetrics} owns a registry of its own (never the global default one, so
 * several runtimes or tests in one JVM do not collide) and hands each driver a
 * {@link dev.settle.runtime.driver.DriverMetrics} bound to its subscription. {@link
 * dev.settle.runtime.observe.HealthEndpoint} serves the registry and the two probes on one {@code http.JettyService}; it
 * learns about subscriptions only through {@link dev.settle.runtime.observe.SubscriptionProbe}. {@link
 * dev.settle.runtime.observe.LogFormat} switches logback between text and JSON lines; {@link
 * dev.settle.runtime.observe.QuietClientLog} holds the Pulsar client's log to its errors while a command prints.
 *
 * <p>Dependencies run one way: this package implements and reads the public types of {@code driver}
 * ({@code DriverMetrics}, {@code Settled}, and {@code SubscriptionDriver} in one adapter); {@code driver} knows
 * nothing of this package, Prometheus or HTTP.
 */
package dev.settle.runtime.observe;
