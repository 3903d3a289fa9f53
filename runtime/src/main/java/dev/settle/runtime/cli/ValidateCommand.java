package dev.settle.runtime.cli;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.manifest.ManifestException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * {@code settle validate <manifest>}: the same preflight as {@code run} (the manifest, then every handler loaded
 * from its JAR and constructed); exit 0 and print the effective consumer settings, with warnings on stderr, or
 * exit 2 and print every problem on stderr.
 */
final class ValidateCommand {
    private ValidateCommand() {}

    static int execute(List<String> args, PrintStream out, PrintStream err) {
        return execute(args, out, err, System.getenv());
    }

    static int execute(List<String> args, PrintStream out, PrintStream err, Map<String, String> environment) {
        if (args.size() != 1) {
            return Main.usage(err, "validate takes one manifest file, got " + args.size() + " arguments");
        }
        Path file = Path.of(args.get(0));
        try (Deployment deployment = Preflight.check(file, environment)) {
            new EffectiveSettings(out, err).print(deployment);
            return 0;
        } catch (ManifestException refused) {
            Refusals.report(refused, err);
            return Main.INVALID;
        } catch (IOException unreadable) {
            Refusals.report(file, unreadable, err);
            return Main.INVALID;
        }
    }
}
