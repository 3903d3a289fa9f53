package dev.settle.runtime.cli;

import dev.settle.runtime.manifest.DurationText;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
            "Prints the new generation and its sha256. With --canary 5%, the JAR runs for that slice of keys first and"
                    + " ramps up (--steps, --step-every), judged against the running generation; --promote, --abort"
                    + " and --step act on a running ramp."
        },
        exitCodeListHeading = "%nExit codes:%n")
final class DeployCommand implements Callable<Integer> {
    @Parameters(paramLabel = "<jar>", arity = "0..1", description = "the handler JAR (not with --promote or --abort)")
    Path jar;

    @Option(
            names = "--canary",
            paramLabel = "PERCENT",
            description = "run the JAR as a canary for this slice of keys first (5 or 5%%), judged against the running"
                    + " generation and rolled back by itself on a regression (docs/live-code.md, Canary ramps)")
    String canary;

    @Option(
            names = "--steps",
            paramLabel = "P,P,...",
            description = "the ramp's steps in percent, from --canary up to 100 (default: --canary,25,100)")
    String steps;

    @Option(
            names = "--step-every",
            paramLabel = "DURATION",
            description = "how long each healthy step runs before the next (default 60s; 0s: only by --step)")
    String stepEvery;

    @Option(names = "--promote", description = "make the running canary the active generation now (all keys)")
    boolean promote;

    @Option(names = "--abort", description = "end the running canary ramp: the running generation takes all keys back")
    boolean abort;

    @Option(names = "--step", description = "move the running canary ramp to its next step now")
    boolean step;

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
        int commands = (promote ? 1 : 0) + (abort ? 1 : 0) + (step ? 1 : 0);
        if (commands > 0) {
            if (commands > 1 || jar != null || canary != null) {
                err.println("settle: --promote, --abort and --step take no JAR and no --canary, and one at a time");
                err.flush();
                return AdminClient.REFUSED;
            }
            return rampCommand(out, err, promote ? "promote" : abort ? "abort" : "step");
        }
        if (jar == null) {
            err.println("settle: name the handler JAR to deploy (or --promote, --abort or --step a canary ramp)");
            err.flush();
            return AdminClient.REFUSED;
        }
        if (!Files.isRegularFile(jar)) {
            err.println("settle: no file at " + jar.toAbsolutePath());
            err.flush();
            return AdminClient.REFUSED;
        }
        String canaryQuery = null;
        if (canary != null) {
            try {
                canaryQuery = canaryQuery();
            } catch (IllegalArgumentException e) {
                err.println("settle: " + e.getMessage());
                err.flush();
                return AdminClient.REFUSED;
            }
        }
        if (manifest != null && canary != null) {
            List<Integer> stepList = new ArrayList<>();
            Duration every;
            try {
                for (String step : canarySteps().split(",")) {
                    stepList.add(Integer.parseInt(step));
                }
            } catch (IllegalArgumentException e) {
                err.println("settle: " + e.getMessage());
                err.flush();
                return AdminClient.REFUSED;
            }
            try {
                every = stepEvery == null ? Duration.ofSeconds(60) : DurationText.parseZeroOrMore(stepEvery);
            } catch (IllegalArgumentException e) {
                err.println("settle: --step-every " + e.getMessage() + " (0s: steps by --step only)");
                err.flush();
                return AdminClient.REFUSED;
            }
            // Recorded for the runtimes, which judge it on their own outcomes and write its later steps.
            return FleetStore.run(manifest, err, fleet -> {
                var stored = fleet.canary(subscription, jar, stepList, every);
                out.println("subscription '" + subscription + "': stored generation " + stored.generation()
                        + ", sha256 " + stored.sha256() + ", handler " + Printable.text(stored.handler())
                        + " as a canary on " + stepList.get(0) + "% of keys (steps " + stepList + "); every runtime"
                        + " runs and judges it: settle status --manifest " + manifest + " shows how it fares");
                out.flush();
                return 0;
            });
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
            String path = "/v1/subscriptions/" + URLEncoder.encode(subscription, StandardCharsets.UTF_8);
            AdminClient.Answer answer = canaryQuery == null
                    ? client.send("PUT", path + "/jar", HttpRequest.BodyPublishers.ofFile(jar))
                    : client.send("POST", path + "/canary?" + canaryQuery, HttpRequest.BodyPublishers.ofFile(jar));
            if (answer.status() != 200) {
                return AdminClient.refused(answer, err);
            }
            if (canaryQuery != null) {
                out.println(
                        "subscription '" + Printable.text(answer.body().get("subscription")) + "': canary generation "
                                + Printable.text(AdminClient.whole(answer.body().get("generation"))) + ", sha256 "
                                + Printable.text(answer.body().get("sha256")) + ", on " + canary.replace("%", "")
                                + "% of keys; settle status shows how it fares, settle deploy --promote or --abort ends it");
                out.flush();
                return 0;
            }
            print(out, "deployed", answer.body());
            return 0;
        } catch (AdminClient.AdminException e) {
            return e.report(err);
        }
    }

    /** {@code steps=5,25,100&stepEvery=60s} from the options, checked for what can be checked here. */
    private String canaryQuery() {
        return "steps=" + URLEncoder.encode(canarySteps(), StandardCharsets.UTF_8)
                + (stepEvery == null ? "" : "&stepEvery=" + URLEncoder.encode(stepEvery, StandardCharsets.UTF_8));
    }

    /** {@code 5,25,100} from the options, checked for what can be checked here. */
    private String canarySteps() {
        String first = canary.strip().replace("%", "");
        if (!first.matches("[0-9]{1,3}") || Integer.parseInt(first) < 1 || Integer.parseInt(first) > 99) {
            throw new IllegalArgumentException(
                    "--canary must be a percent from 1 to 99, such as 5%, was '" + canary + "'");
        }
        int percent = Integer.parseInt(first);
        String list = steps != null
                ? steps.replace("%", "").replace(" ", "")
                : percent < 25 ? percent + ",25,100" : percent + ",100";
        if (!list.startsWith(percent + ",")) {
            throw new IllegalArgumentException("--steps must start at --canary (" + percent + "), was '" + steps + "'");
        }
        if (!list.matches("[0-9]{1,3}(,[0-9]{1,3})*")) {
            throw new IllegalArgumentException(
                    "--steps must be whole percents separated by commas, such as 5,25,100, was '" + steps + "'");
        }
        return list;
    }

    private Integer rampCommand(PrintWriter out, PrintWriter err, String command) {
        if (manifest != null) {
            err.println("settle: --" + command + " needs a running settle's admin API (--admin and --token-file)");
            err.flush();
            return AdminClient.REFUSED;
        }
        try {
            AdminClient.Answer answer = client.send(
                    "POST",
                    "/v1/subscriptions/" + URLEncoder.encode(subscription, StandardCharsets.UTF_8) + "/canary/"
                            + command,
                    HttpRequest.BodyPublishers.noBody());
            if (answer.status() != 200) {
                return AdminClient.refused(answer, err);
            }
            out.println("subscription '" + subscription + "': canary "
                    + (command.equals("abort") ? "aborted" : command.equals("promote") ? "promoted" : "stepped")
                    + "; generation "
                    + Printable.text(AdminClient.whole(answer.body().get("generation")))
                    + " (settle status shows the slices)");
            out.flush();
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
