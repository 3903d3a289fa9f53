package dev.settle.runtime.cli;

import java.util.Optional;

/**
 * What loading a subscription's handler found, for {@code validate} to print.
 *
 * @param className the handler class, as declared in its JAR
 * @param messageType the handler's type argument
 * @param version the JAR's Implementation-Version, if any
 */
record HandlerFacts(String className, Class<?> messageType, Optional<String> version) {}
