package dev.settle.runtime.cli;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.manifest.ChangedMeanings;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.ManifestLoader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code settle validate <manifest>}: the same preflight as {@code run} (the manifest, then every handler loaded
 * from its JAR and constructed); exit 0 and print the effective consumer settings, with warnings on stderr, or
 * exit 2 and print every problem on stderr. {@code --env-file} and {@code --skip-jar-check} check here a manifest
 * bound for another machine, whose variables and JARs exist only there.
 */
@Command(
        name = "validate",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = {
            "Check a manifest and its handler JARs as 'run' would, without connecting to Pulsar (with --broker, then"
                    + " ask the broker as 'preflight' does).",
            "Valid: prints, per subscription, what Pulsar will get, and exits 0. Refused: prints every problem on"
                    + " stderr as file:line:col: setting: message, and exits 2.",
            "Checking a handler JAR runs its code: its static initialisers, its handler's constructor and open() run"
                    + " in this process, with this user's files, environment and network. Validate only JARs you"
                    + " would run; --skip-jar-check runs none."
        },
        exitCodeListHeading = "%nExit codes:%n")
final class ValidateCommand implements Callable<Integer> {
    @Parameters(paramLabel = "<manifest.yaml>", description = "the manifest to check")
    Path manifest;

    @Option(
            names = "--env-file",
            paramLabel = "FILE",
            description = "NAME=value lines (# comments) set over the environment, for the manifest's $${VAR} and"
                    + " token: {env: VAR}: the variables the deployment will have")
    Path envFile;

    @Option(
            names = "--skip-jar-check",
            description = "check the manifest only: handler JARs are not looked for, opened or loaded (for a"
                    + " manifest whose JARs exist only where it will run); the output says so per subscription")
    boolean skipJarCheck;

    @Option(
            names = "--broker",
            description = "then ask the manifest's broker, as settle preflight does, whether each promise can hold"
                    + " there (docs/preflight.md); a check that fails for a guarantee the manifest asks for exits 2")
    boolean broker;

    private final PrintStream out;
    private final PrintStream err;
    private final Map<String, String> environment;
    /** The keys the manifest writes whose meaning changed since, one line each ({@link ChangedMeanings}). */
    private final Function<Manifest, List<String>> changedMeanings;

    ValidateCommand(PrintStream out, PrintStream err, Map<String, String> environment) {
        this(out, err, environment, ChangedMeanings::of);
    }

    ValidateCommand(
            PrintStream out,
            PrintStream err,
            Map<String, String> environment,
            Function<Manifest, List<String>> changedMeanings) {
        this.out = out;
        this.err = err;
        this.environment = environment;
        this.changedMeanings = changedMeanings;
    }

    /** {@code settle validate <args>}. */
    static int execute(List<String> args, PrintStream out, PrintStream err) {
        return execute(args, out, err, System.getenv());
    }

    /** {@code settle validate <args>} with {@code environment} as the process environment. */
    static int execute(List<String> args, PrintStream out, PrintStream err, Map<String, String> environment) {
        List<String> line = new ArrayList<>();
        line.add("validate");
        line.addAll(args);
        return Main.execute(line, out, err, environment);
    }

    @Override
    public Integer call() {
        Map<String, String> variables = environment;
        if (envFile != null) {
            try {
                variables = EnvFile.over(environment, envFile);
            } catch (ManifestException refused) {
                Refusals.report(refused, err);
                return Main.INVALID;
            } catch (IOException unreadable) {
                err.println("settle: cannot read --env-file '" + envFile + "': " + Refusals.reason(unreadable));
                return Main.INVALID;
            }
        }
        try {
            if (skipJarCheck) {
                Manifest unchecked = ManifestLoader.loadWithoutJars(manifest, variables);
                new EffectiveSettings(out, err).printUnchecked(unchecked);
                warnOfChangedMeanings(unchecked);
                err.println("settle: warning: --skip-jar-check: no handler JAR was opened, so no handler was"
                        + " checked; 'settle run' loads them and refuses to start on a problem");
                return broker
                        ? PreflightCommand.check(ManifestLoader.loadWithoutJars(manifest, variables), false, out, err)
                        : 0;
            }
            try (Deployment deployment = Preflight.check(manifest, variables)) {
                new EffectiveSettings(out, err).print(deployment);
                warnOfChangedMeanings(deployment.manifest());
                return broker ? PreflightCommand.check(deployment.manifest(), false, out, err) : 0;
            }
        } catch (ManifestException refused) {
            Refusals.report(refused, err);
            return Main.INVALID;
        } catch (IOException unreadable) {
            Refusals.report(manifest, unreadable, err);
            return Main.INVALID;
        }
    }

    /**
     * A manifest written for an older Settle is valid, but a key it writes may now mean something else: each is named
     * where it is written, with the version and what changed, for its author to decide (nothing is refused).
     */
    private void warnOfChangedMeanings(Manifest checked) {
        changedMeanings.apply(checked).forEach(line -> err.println("settle: warning: " + line));
    }
}
