package dev.settle.runtime.cli;

import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.ManifestLoader;
import dev.settle.runtime.manifest.Problem;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The one way {@code validate} and {@code run} accept a manifest: it loads, then its handlers are checked, and
 * any problem refuses it. Keeping this in one place is what makes "validate passed" mean "run will start".
 */
final class ManifestCheck {
    private ManifestCheck() {}

    /** Loads with the process environment. */
    static Manifest load(Path file, HandlerCheck handlers) throws ManifestException, IOException {
        return load(file, System.getenv(), handlers);
    }

    static Manifest load(Path file, Map<String, String> environment, HandlerCheck handlers)
            throws ManifestException, IOException {
        Manifest manifest = ManifestLoader.load(file, environment);
        List<Problem> problems = handlers.check(manifest);
        if (!problems.isEmpty()) {
            throw new ManifestException(problems);
        }
        return manifest;
    }

    /** Prints every problem, one per line, as {@code file:line:col: path: message}. */
    static void report(ManifestException refused, PrintStream err) {
        refused.problems().forEach(err::println);
    }

    /** Says why a manifest file could not be read at all. */
    static void report(Path file, IOException unreadable, PrintStream err) {
        String reason;
        if (unreadable instanceof NoSuchFileException) {
            reason = "no such file";
        } else if (unreadable instanceof AccessDeniedException) {
            reason = "permission denied";
        } else {
            reason = unreadable.getMessage();
        }
        err.println("settle: cannot read manifest '" + file + "': " + reason);
    }
}
