/**
 * The composition root: {@link dev.settle.runtime.Settle} wires a {@link dev.settle.runtime.deployment.Deployment}
 * to one Pulsar client, one driver per subscription, the metrics and the health endpoint, and stops them in order.
 *
 * <p>The packages depend one way: {@code manifest}, {@code isolation} and {@code time} on nothing of the runtime;
 * {@code deployment} on {@code manifest} and {@code isolation}; {@code driver} on those and {@code time};
 * {@code observe} on {@code driver} and {@code manifest}; this package on all of them; {@code cli} on everything.
 * Nothing depends on {@code cli}. A test holds the build to it.
 *
 * <p>The runtime's public types are public for the test kit and the command line, not supported API: they change
 * with the runtime. The few a handler's tests reach through the test kit say <b>Supported API</b> in their javadoc
 * (the kit's {@code SupportedApiTest} holds the list to what the kit takes, returns and throws).
 */
package dev.settle.runtime;
