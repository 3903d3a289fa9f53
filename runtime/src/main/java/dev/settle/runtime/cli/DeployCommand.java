package dev.settle.runtime.cli;

import java.io.PrintWriter;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code settle deploy <jar> --subscription NAME}: uploads a handler JAR to a running Settle's admin API. */
@Command(
        name = "deploy",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = {
            "Upload a handler JAR to a running Settle: it is checked completely, then swapped in with the consumer"
                    + " kept open (docs/live-code.md).",
            "Prints the new generation and its sha256."
        },
        exitCodeListHeading = "%nExit codes:%n")
final class DeployCommand implements Callable<Integer> {
    @Parameters(paramLabel = "<jar>", description = "the handler JAR")
    Path jar;

    @Option(names = "--subscription", paramLabel = "NAME", required = true, description = "the subscription")
    String subscription;

    @Option(
            names = "--manifest",
            paramLabel = "FILE",
            description = "store the JAR in Pulsar for every runtime, with this manifest's admin.codeStore: pulsar and"
                    + " its credentials; no running settle needed (instead of --admin)")
    Path manifest;

    @Mixin
    AdminClient client;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (!Files.isRegularFile(jar)) {
            err.println("settle: no file at " + jar.toAbsolutePath());
            err.flush();
            return AdminClient.REFUSED;
        }
        if (manifest != null) {
            return FleetStore.run(manifest, err, fleet -> {
                var deployed = fleet.deploy(subscription, jar);
                out.println("subscription '" + subscription + "': stored generation " + deployed.generation()
                        + ", sha256 " + deployed.sha256() + ", handler " + Printable.text(deployed.handler())
                        + " (previous sha256 " + Printable.text(deployed.previousSha256())
                        + "); every runtime checks and swaps it: settle status --manifest "
                        + manifest + " shows which run it");
                out.flush();
                return 0;
            });
        }
        try {
            AdminClient.Answer answer = client.send(
                    "PUT",
                    "/v1/subscriptions/" + URLEncoder.encode(subscription, StandardCharsets.UTF_8) + "/jar",
                    HttpRequest.BodyPublishers.ofFile(jar));
            if (answer.status() != 200) {
                return AdminClient.refused(answer, err);
            }
            print(out, "deployed", answer.body());
            return 0;
        } catch (AdminClient.AdminException e) {
            return e.report(err);
        }
    }

    /** The answer of a deploy or a rollback, one line. */
    static void print(PrintWriter out, String what, Map<String, Object> body) {
        out.println("subscription '" + Printable.text(body.get("subscription")) + "': " + what + " generation "
                + Printable.text(AdminClient.whole(body.get("generation"))) + ", sha256 "
                + Printable.text(body.get("sha256")) + ", handler " + Printable.text(body.get("handler"))
                + " (previous sha256 " + Printable.text(body.get("previousSha256")) + "; handler calls waited "
                + Printable.text(body.get("swapMillis")) + " ms)");
        out.flush();
    }
}
