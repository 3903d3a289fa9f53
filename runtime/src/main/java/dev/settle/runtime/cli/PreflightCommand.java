package dev.settle.runtime.cli;

import dev.settle.runtime.PulsarClients;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.ManifestLoader;
import dev.settle.runtime.preflight.BrokerPreflight;
import dev.settle.runtime.preflight.PreflightReport;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.transaction.Transaction;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code settle preflight <manifest>}: asks the manifest's broker whether each promise of each subscription can hold
 * there (docs/preflight.md), one line a check; exit 2 when a check fails for a guarantee the manifest asks for. The
 * manifest's handler JARs are not opened: this is about the broker.
 */
@Command(
        name = "preflight",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = {
            "Ask the manifest's broker whether each subscription's promises can hold there: the transaction"
                    + " coordinator, batch-index acknowledgement, deduplication, package management, the role's"
                    + " permissions, output schemas, the subscription itself (docs/preflight.md).",
            "Each check prints ok, failed or could-not-check (naming what it could not read). Nothing is written to"
                    + " a topic and no subscription is created."
        },
        exitCodeListHeading = "%nExit codes:%n")
final class PreflightCommand implements Callable<Integer> {
    @Parameters(paramLabel = "<manifest.yaml>", description = "the manifest whose broker to ask")
    Path manifest;

    @Option(
            names = "--env-file",
            paramLabel = "FILE",
            description = "NAME=value lines (# comments) set over the environment, for the manifest's $${VAR}")
    Path envFile;

    @Option(
            names = "--scale-to-zero",
            description = "the deployment scales to zero replicas: a subscription that does not exist yet refuses (a"
                    + " scaler reading its backlog would never start it)")
    boolean scaleToZero;

    private final PrintStream out;
    private final PrintStream err;
    private final Map<String, String> environment;

    PreflightCommand(PrintStream out, PrintStream err, Map<String, String> environment) {
        this.out = out;
        this.err = err;
        this.environment = environment;
    }

    @Override
    public Integer call() {
        Manifest loaded;
        try {
            Map<String, String> variables = envFile == null ? environment : EnvFile.over(environment, envFile);
            loaded = ManifestLoader.loadWithoutJars(manifest, variables);
        } catch (ManifestException refused) {
            Refusals.report(refused, err);
            return Main.INVALID;
        } catch (IOException unreadable) {
            Refusals.report(manifest, unreadable, err);
            return Main.INVALID;
        }
        return check(loaded, scaleToZero, out, err);
    }

    /** Runs the checks of {@code manifest} and prints them; the exit code: 0, 1 (unreachable) or 2 (refused). */
    static int check(Manifest manifest, boolean scaleToZero, PrintStream out, PrintStream err) {
        Optional<String> unreachable =
                ServiceUrlProbe.unreachable(manifest.pulsar().serviceUrl());
        if (unreachable.isPresent()) {
            err.println("settle: preflight: " + unreachable.get() + " (pulsar.serviceUrl in " + manifest.file() + ")");
            return Main.UNREACHABLE;
        }
        try (PulsarClient client = PulsarClients.create(manifest.pulsar())) {
            PreflightReport report = BrokerPreflight.of(manifest, client)
                    .scaleToZero(scaleToZero)
                    .transactionProbe(() -> beginAndAbort(manifest))
                    .run();
            out.print(report.text());
            out.flush();
            if (report.refuses()) {
                long refusing =
                        report.checks().stream().filter(c -> c.refuses()).count();
                err.println("settle: preflight: " + refusing + " check" + (refusing == 1 ? "" : "s")
                        + " failed for a guarantee " + manifest.file() + " asks for; each line above says what to"
                        + " change");
                return Main.INVALID;
            }
            return 0;
        } catch (PulsarClientException e) {
            err.println("settle: preflight: cannot create a Pulsar client for " + manifest.file() + ": " + e);
            return Main.INVALID;
        } catch (IOException unreadable) {
            err.println("settle: preflight: " + Refusals.reason(unreadable));
            return Main.INVALID;
        }
    }

    /** Used only when the broker's settings cannot be read: a client with transactions connects to the coordinator. */
    private static void beginAndAbort(Manifest manifest) throws Exception {
        try (PulsarClient transactions = PulsarClients.createWithTransactions(manifest.pulsar())) {
            Transaction transaction = transactions
                    .newTransaction()
                    .withTransactionTimeout(10, TimeUnit.SECONDS)
                    .build()
                    .get(30, TimeUnit.SECONDS);
            transaction.abort().get(30, TimeUnit.SECONDS);
        }
    }
}
