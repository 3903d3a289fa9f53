/**
 * Traces each handling with OpenTelemetry (docs/observability.md, "Traces"): the one package that touches it.
 *
 * <p>{@link dev.settle.runtime.trace.OpenTelemetryTracing} implements the driver's {@code Tracing} port: a span per
 * handling, a child of the producer's context read from the message's properties, linked to the span of the
 * message's previous attempt; a span per output and per dead letter below it, whose context goes into the message
 * it sends. Off (the manifest's default), nothing here is loaded: the driver holds null.
 *
 * <p>Dependencies run one way: this package implements {@code driver.Tracing} and {@code publish.SendTrace}; neither
 * knows OpenTelemetry.
 */
package dev.settle.runtime.trace;
