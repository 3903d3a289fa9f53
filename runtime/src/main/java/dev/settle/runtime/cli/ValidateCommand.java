package dev.settle.runtime.cli;

import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * {@code settle validate <manifest>}: exit 0 and print the effective consumer settings, or exit 2 and print every
 * problem on stderr.
 */
final class ValidateCommand {
    private ValidateCommand() {}

    static int execute(List<String> args, PrintStream out, PrintStream err) {
        try (JarHandlerCheck handlers = new JarHandlerCheck()) {
            return execute(args, out, err, handlers);
        }
    }

    /** With the check of handler JARs that {@code Main} wires in. */
    static int execute(List<String> args, PrintStream out, PrintStream err, HandlerCheck handlers) {
        return execute(args, out, err, handlers, System.getenv());
    }

    static int execute(List<String> args, PrintStream out, PrintStream err, HandlerCheck handlers,
            Map<String, String> environment) {
        if (args.size() != 1) {
            return Main.usage(err, "validate takes one manifest file, got " + args.size() + " arguments");
        }
        Path file = Path.of(args.get(0));
        Manifest manifest;
        try {
            manifest = ManifestCheck.load(file, environment, handlers);
        } catch (ManifestException refused) {
            ManifestCheck.report(refused, err);
            return Main.INVALID;
        } catch (IOException unreadable) {
            ManifestCheck.report(file, unreadable, err);
            return Main.INVALID;
        }
        new EffectiveSettings(out, handlers).print(manifest);
        return 0;
    }
}
