package dev.settle.runtime.cli;

import dev.settle.runtime.admin.AdminServer;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code settle status [--subscription NAME]}: each subscription's running generation and the kept ones. */
@Command(
        name = "status",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = "Show a running Settle's handler generations: the running one and those kept for rollback.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:shown",
            "1:the admin API cannot be reached or refused the token",
            "2:no such subscription",
            "64:the command line is not understood"
        })
final class StatusCommand implements Callable<Integer> {
    @Option(names = "--subscription", paramLabel = "NAME", description = "one subscription (default: all)")
    String subscription;

    @Option(
            names = "--manifest",
            paramLabel = "FILE",
            description = "read the code store in Pulsar with this manifest's admin.codeStore: pulsar and its"
                    + " credentials; no running settle needed (instead of --admin)")
    java.nio.file.Path manifest;

    @Mixin
    AdminClient client;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (manifest != null) {
            return FleetStore.run(manifest, err, fleet -> {
                for (String name : subscription == null ? fleet.subscriptions() : List.of(subscription)) {
                    var status = fleet.status(name);
                    if (status.isEmpty()) {
                        out.println("subscription '" + name + "': no generation stored yet (no runtime has started)");
                    } else {
                        print(out, AdminServer.json(status.get()));
                    }
                }
                out.flush();
                return 0;
            });
        }
        try {
            AdminClient.Answer answer = client.send(
                    "GET",
                    "/v1/subscriptions"
                            + (subscription == null
                                    ? ""
                                    : "/" + URLEncoder.encode(subscription, StandardCharsets.UTF_8)),
                    HttpRequest.BodyPublishers.noBody());
            if (answer.status() != 200) {
                return AdminClient.refused(answer, err);
            }
            Object all = answer.body().get("subscriptions");
            List<?> statuses = all instanceof List<?> list ? list : List.of(answer.body());
            for (Object status : statuses) {
                print(out, AdminClient.asMap(status));
            }
            out.flush();
            return 0;
        } catch (AdminClient.AdminException e) {
            err.println("settle: " + e.getMessage());
            err.flush();
            return e.exitCode;
        }
    }

    private static void print(PrintWriter out, Map<String, Object> status) {
        out.println("subscription '" + status.get("subscription") + "': generation "
                + AdminClient.whole(status.get("generation")) + ", sha256 " + status.get("sha256") + ", handler "
                + status.get("handler") + " (" + status.get("source") + ", active since " + status.get("activeSince")
                + ")");
        Object problem = status.get("problem");
        if (problem != null) {
            out.println("  this runtime does not run generation " + AdminClient.whole(status.get("desired")) + ": "
                    + problem);
        }
        Object reload = status.get("reload");
        if (reload != null) {
            out.println("  the last manifest reload could not change it, so it runs on as it was: " + reload);
        }
        if (status.get("fleet") instanceof List<?> fleet) {
            // One line for the whole rollout, then one per runtime: "3 of 3 on generation 7".
            Object desired = AdminClient.whole(status.get("desired"));
            long on = fleet.stream()
                    .map(AdminClient::asMap)
                    .filter(runtime -> String.valueOf(AdminClient.whole(runtime.get("generation")))
                            .equals(String.valueOf(desired)))
                    .count();
            out.println("  fleet: " + on + " of " + fleet.size() + " on generation " + desired + " (desired)");
            for (Object each : fleet) {
                Map<String, Object> runtime = AdminClient.asMap(each);
                out.println("  runtime " + runtime.get("instance") + ": generation "
                        + AdminClient.whole(runtime.get("generation")) + ", sha256 " + runtime.get("sha256")
                        + (runtime.get("problem") == null
                                ? ""
                                : ", cannot run the desired one: " + runtime.get("problem"))
                        + " (reported " + runtime.get("at") + ")");
            }
        }
        Object kept = status.get("kept");
        if (kept instanceof List<?> generations) {
            for (Object generation : generations) {
                Map<String, Object> g = AdminClient.asMap(generation);
                out.println("  kept: generation " + AdminClient.whole(g.get("generation")) + ", sha256 "
                        + g.get("sha256") + ", " + g.get("handler") + " (" + g.get("source") + ", activated "
                        + g.get("activatedAt") + ")");
            }
        }
    }
}
