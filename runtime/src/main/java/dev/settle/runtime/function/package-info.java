/**
 * Unmodified Pulsar Functions behind the driver's port: {@link dev.settle.runtime.function.FunctionPort} calls an
 * {@code org.apache.pulsar.functions.api.Function} (or a {@code java.util.function.Function}) with a
 * {@code Context} of what Settle can serve, publishes the return value, and settles the input only once every
 * output is durable.
 */
package dev.settle.runtime.function;
