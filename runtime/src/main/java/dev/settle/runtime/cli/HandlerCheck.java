package dev.settle.runtime.cli;

import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.Problem;
import java.util.List;
import java.util.Optional;

/**
 * The checks of a manifest that need its handler JARs opened: every named handler is found in exactly one JAR,
 * or the JAR declares exactly one when none is named. Runs only once the manifest itself is valid; problems point
 * at the manifest through {@link Manifest#locate}, for example {@code manifest.locate("subscriptions[0].handler")}.
 */
@FunctionalInterface
interface HandlerCheck {
    /** Checks nothing: for commands and tests that look at the manifest alone. */
    HandlerCheck NONE = manifest -> List.of();

    /** Every problem found; empty when all handlers are there. */
    List<Problem> check(Manifest manifest);

    /** What {@link #check} found of a subscription's handler; empty for checks that load nothing. */
    default Optional<HandlerFacts> facts(String subscription) {
        return Optional.empty();
    }
}
