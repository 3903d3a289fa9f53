package dev.settle.runtime.cli;

import dev.settle.runtime.manifest.ManifestException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** How {@code validate} and {@code run} print a manifest they refuse. */
final class Refusals {
    private Refusals() {}

    /** Prints every problem, one per line, as {@code file:line:col: path: message}. */
    static void report(ManifestException refused, PrintStream err) {
        refused.problems().forEach(err::println);
    }

    /** Says why a manifest file could not be read at all. */
    static void report(Path file, IOException unreadable, PrintStream err) {
        err.println("settle: cannot read manifest '" + file + "': " + reason(unreadable));
    }

    /** Why a file could not be read, in words. */
    static String reason(IOException unreadable) {
        if (unreadable instanceof NoSuchFileException) {
            return "no such file";
        } else if (unreadable instanceof AccessDeniedException) {
            return "permission denied";
        }
        return unreadable.getMessage();
    }
}
