/**
 * Publishing while a delivery is handled: {@link dev.settle.runtime.publish.Outputs} makes messages for output
 * topics (Pulsar producers in the runtime, something else in a test), and {@link dev.settle.runtime.publish.Publishes}
 * gathers the sends of one delivery, so that its acknowledgement waits until every one of them is durable.
 */
package dev.settle.runtime.publish;
