package dev.settle.runtime.cli;

import java.io.PrintWriter;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code settle rollback --subscription NAME}: back to the kept generation below the running one. */
@Command(
        name = "rollback",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = "Swap a running Settle's subscription back to its previous kept generation (docs/live-code.md).",
        exitCodeListHeading = "%nExit codes:%n")
final class RollbackCommand extends PrintingCommand {
    @Option(names = "--subscription", paramLabel = "NAME", required = true, description = "the subscription")
    String subscription;

    @Option(
            names = "--manifest",
            paramLabel = "FILE",
            description = "set the generation back in Pulsar for every runtime, with this manifest's admin.codeStore:"
                    + " pulsar and its credentials; no running settle needed (instead of --admin)")
    java.nio.file.Path manifest;

    @Mixin
    AdminClient client;

    @Override
    int run(PrintWriter out, PrintWriter err) {
        if (manifest != null) {
            return FleetStore.run(manifest, err, fleet -> {
                var back = fleet.rollback(subscription);
                out.println("subscription '" + subscription + "': generation " + back.generation() + " (sha256 "
                        + Printable.text(back.sha256()) + ", " + Printable.text(back.handler())
                        + ") is active again for every runtime (previous sha256 "
                        + Printable.text(back.previousSha256()) + ")");
                out.flush();
                return 0;
            });
        }
        try {
            AdminClient.Answer answer = client.send(
                    "POST",
                    "/v1/subscriptions/" + URLEncoder.encode(subscription, StandardCharsets.UTF_8) + "/rollback",
                    HttpRequest.BodyPublishers.noBody());
            if (answer.status() != 200) {
                return AdminClient.refused(answer, err);
            }
            DeployCommand.print(out, "rolled back to", answer.body());
            return 0;
        } catch (AdminClient.AdminException e) {
            return e.report(err);
        }
    }
}
