/**
 * Handler JARs to class loaders to handler instances.
 *
 * <p>{@link dev.settle.runtime.isolation.HandlerLoader} gives every handler JAR (or folder of JARs: the handler and
 * its libraries) a class loader of its own whose parent is the platform class loader. Only {@code dev.settle.sdk}
 * and {@code org.slf4j} are taken from the runtime ({@code ClassLoadingPolicy}); the runtime's Pulsar client,
 * SnakeYAML, Prometheus and logback are invisible, so a handler may bundle any version of any library. Handlers
 * are discovered in {@code META-INF/services/dev.settle.sdk.Handler} of those JARs only, created with their public
 * no-argument constructor, and called with the thread context class loader set to their own
 * ({@link dev.settle.runtime.isolation.LoadedHandler}). Every mistake is a
 * {@link dev.settle.runtime.isolation.HandlerLoadException} that names the JAR and what it declares.
 *
 * <p>Isolation keeps libraries apart; it is not a security boundary.
 */
package dev.settle.runtime.isolation;
