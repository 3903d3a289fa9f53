package dev.settle.runtime.live;

import dev.settle.runtime.deadletter.HeldBy;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.isolation.HandlerLoader;
import dev.settle.runtime.isolation.LoadedHandler;
import java.io.IOException;
import java.util.Objects;

/**
 * One generation of a subscription's code, opened and ready to handle: its record, the handler, the port the
 * driver reaches it through, and the loader that owns its class loader ({@code null} for the manifest's handler at
 * start, whose loader the deployment made for this subscription and closes when it is released).
 */
final class Generation {
    final GenerationRecord record;
    final LoadedHandler handler;
    final HandlerPort port;
    final HandlerLoader ownLoader;
    /** For the manifest's handler at start: hands its class loader back to the deployment; else null. */
    final Runnable releaseShared;

    Generation(GenerationRecord record, LoadedHandler handler, HandlerPort port, HandlerLoader ownLoader) {
        this(record, handler, port, ownLoader, null);
    }

    Generation(
            GenerationRecord record,
            LoadedHandler handler,
            HandlerPort port,
            HandlerLoader ownLoader,
            Runnable releaseShared) {
        this.record = Objects.requireNonNull(record, "record");
        this.handler = handler;
        // A failure is logged, and its dead letter written (settle.code), with the port that ran the call: name the
        // generation and its JAR's sha256, not only the class, which two generations may share.
        // A batch handler's gathering too: the journal reads a settlement's generation from this name.
        this.port = Objects.requireNonNull(port, "port").named(record.handler() + " (" + describe(record) + ")");
        this.ownLoader = ownLoader;
        this.releaseShared = releaseShared;
    }

    /** "generation 3, sha256 03aa7c755e16"; a manifest's generation, whose JAR is not digested, has no sha256. */
    private static String describe(GenerationRecord record) {
        return record.sha256().isEmpty()
                ? "generation " + record.number()
                : "generation " + record.number() + ", sha256 " + record.shortSha();
    }

    /**
     * This generation as held messages name it: its number and its JAR's sha256 (a manifest's JAR that was not digested
     * is digested here, so a restart with another JAR is told apart from the same one).
     */
    HeldBy heldBy() {
        String sha256 = record.sha256();
        if (sha256.isEmpty() && handler != null) {
            try {
                sha256 = JarDigest.of(handler.jar());
            } catch (IOException unreadable) {
                // Told apart by its number alone, as a held copy of unknown code is.
                sha256 = "";
            }
        }
        return new HeldBy(record.number(), sha256);
    }

    @Override
    public String toString() {
        return "generation " + record.number() + " (" + record.handler()
                + (record.sha256().isEmpty() ? "" : ", sha256 " + record.shortSha()) + ")";
    }
}
