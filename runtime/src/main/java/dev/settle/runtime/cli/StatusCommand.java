package dev.settle.runtime.cli;

import dev.settle.runtime.admin.AdminServer;
import dev.settle.runtime.live.FleetRecords;
import dev.settle.runtime.live.SubscriptionStatus;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code settle status [--subscription NAME]}: each subscription's running generation and the kept ones. */
@Command(
        name = "status",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = "Show a running Settle's handler generations: the running one and those kept for rollback.",
        exitCodeListHeading = "%nExit codes:%n")
final class StatusCommand extends PrintingCommand {
    @Option(names = "--subscription", paramLabel = "NAME", description = "one subscription (default: all)")
    String subscription;

    @Option(
            names = "--manifest",
            paramLabel = "FILE",
            description = "read the code store in Pulsar with this manifest's admin.codeStore: pulsar and its"
                    + " credentials; no running settle needed (instead of --admin)")
    java.nio.file.Path manifest;

    @Option(
            names = "--settings",
            description = "show the settings the running client, consumers and producers are in force with"
                    + " (GET /config/effective), and those that differ from the manifest, instead of the generations")
    boolean settings;

    @Mixin
    AdminClient client;

    @Override
    int run(PrintWriter out, PrintWriter err) {
        if (manifest != null) {
            return FleetStore.run(manifest, err, fleet -> {
                for (String name : subscription == null ? fleet.subscriptions() : List.of(subscription)) {
                    Optional<SubscriptionStatus> status;
                    try {
                        status = fleet.status(name);
                    } catch (FleetRecords.MalformedRecordException malformed) {
                        out.println("subscription '" + Printable.text(name) + "': "
                                + Printable.text(malformed.getMessage()));
                        continue;
                    }
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
        if (settings) {
            return settings(out, err);
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
                print(out, status);
            }
            out.flush();
            return 0;
        } catch (AdminClient.AdminException e) {
            return e.report(err);
        }
    }

    /** {@code --settings}: the settings in force, a line a consumer, producer and difference; escaped. */
    private int settings(PrintWriter out, PrintWriter err) {
        try {
            AdminClient.Answer answer = client.send("GET", "/config/effective", HttpRequest.BodyPublishers.noBody());
            if (answer.status() != 200) {
                return AdminClient.refused(answer, err);
            }
            Map<?, ?> all = answer.body().get("subscriptions") instanceof Map<?, ?> map ? map : Map.of();
            if (subscription != null && !all.containsKey(subscription)) {
                err.println("settle: no subscription '" + Printable.text(subscription) + "' runs there");
                err.flush();
                return 2;
            }
            all.forEach((name, one) -> {
                if (subscription != null && !subscription.equals(name)) {
                    return;
                }
                out.println("subscription '" + Printable.text(name) + "': settings in force");
                if (!(one instanceof Map<?, ?> in)) {
                    out.println("  malformed (not a JSON object): " + Printable.text(one));
                    return;
                }
                out.println("  consumer: "
                        + (in.get("consumer") == null ? "not subscribed yet" : line(in.get("consumer"))));
                if (in.get("producers") instanceof List<?> producers) {
                    producers.forEach(producer -> out.println("  producer: " + line(producer)));
                }
                if (in.get("transactionTimeoutMillis") != null) {
                    out.println("  transactions: timeout " + number(in, "transactionTimeoutMillis") + " ms");
                }
                List<?> differences = in.get("differences") instanceof List<?> list ? list : List.of();
                if (differences.isEmpty()) {
                    out.println("  as the manifest says");
                }
                for (Object difference : differences) {
                    out.println("  differs from the manifest: "
                            + (difference instanceof Map<?, ?> d
                                    ? field(d, "setting") + " is " + field(d, "inForce") + " where the manifest says "
                                            + field(d, "manifest")
                                    : Printable.text(difference)));
                }
            });
            if (subscription == null) {
                out.println("client: " + line(answer.body().get("client")));
                out.println("transactions: " + line(answer.body().get("transactions")));
            }
            out.flush();
            return 0;
        } catch (AdminClient.AdminException e) {
            return e.report(err);
        }
    }

    /** A JSON object as {@code key=value} pairs on one line, escaped; anything else as itself, escaped. */
    private static String line(Object json) {
        if (!(json instanceof Map<?, ?> map)) {
            return Printable.text(json);
        }
        StringBuilder text = new StringBuilder();
        map.forEach((key, value) -> {
            if (text.length() > 0) {
                text.append(' ');
            }
            text.append(Printable.text(key))
                    .append('=')
                    .append(value instanceof Map<?, ?> ? "{" + line(value) + "}" : Printable.text(value));
        });
        return text.toString();
    }

    /**
     * Prints one subscription's status. Every field is escaped ({@link Printable}): they come from code-store records
     * and reports anyone who may write those topics wrote. What is malformed is said and skipped; the rest is shown.
     */
    static void print(PrintWriter out, Object answer) {
        if (!(answer instanceof Map<?, ?> status)) {
            out.println("a subscription's status is malformed (not a JSON object): " + Printable.text(answer));
            return;
        }
        if (status.get("function") != null) {
            // A Pulsar Function keeps no generations (its code is the manifest's): its breaker is all there is.
            out.println("subscription '" + field(status, "subscription") + "': Pulsar Function "
                    + field(status, "function") + " (its code is the manifest's: no generations)");
            printBreaker(out, status);
            return;
        }
        out.println("subscription '" + field(status, "subscription") + "': generation " + number(status, "generation")
                + ", sha256 " + field(status, "sha256") + ", handler " + field(status, "handler") + " ("
                + field(status, "source") + ", active since " + field(status, "activeSince") + ")");
        if (status.get("problem") != null) {
            out.println("  this runtime does not run generation " + number(status, "desired") + ": "
                    + field(status, "problem"));
        }
        printBreaker(out, status);
        if (status.get("canary") instanceof Map<?, ?> canary) {
            printCanary(out, canary);
        }
        Object reload = status.get("reload");
        if (reload != null) {
            out.println("  the last manifest reload could not change it, so it runs on as it was: " + reload);
        }
        if (status.get("fleet") instanceof List<?> fleet) {
            // One line for the whole rollout, then one per runtime: "3 of 3 on generation 7".
            String desired = number(status, "desired");
            long on = fleet.stream()
                    .filter(runtime -> runtime instanceof Map<?, ?> map
                            && map.get("malformed") == null
                            && number(map, "generation").equals(desired))
                    .count();
            out.println("  fleet: " + on + " of " + fleet.size() + " on generation " + desired + " (desired)");
            for (Object each : fleet) {
                if (!(each instanceof Map<?, ?> runtime)) {
                    out.println("  a runtime's report is malformed (not a JSON object): " + Printable.text(each));
                } else if (runtime.get("malformed") != null) {
                    out.println("  runtime " + field(runtime, "instance") + ": its report is malformed ("
                            + field(runtime, "malformed") + "); not counted");
                } else {
                    out.println(
                            "  runtime " + field(runtime, "instance") + ": generation " + number(runtime, "generation")
                                    + ", sha256 " + field(runtime, "sha256")
                                    + (runtime.get("problem") == null
                                            ? ""
                                            : ", cannot run the desired one: " + field(runtime, "problem"))
                                    + " (reported " + field(runtime, "at") + ")");
                }
            }
        }
        if (status.get("kept") instanceof List<?> generations) {
            for (Object generation : generations) {
                if (!(generation instanceof Map<?, ?> g)) {
                    out.println("  a kept generation is malformed (not a JSON object): " + Printable.text(generation));
                    continue;
                }
                out.println("  kept: generation " + number(g, "generation") + ", sha256 " + field(g, "sha256") + ", "
                        + field(g, "handler") + " (" + field(g, "source") + ", activated " + field(g, "activatedAt")
                        + ")");
            }
        }
    }

    /** The outage circuit breaker: open or half-open means receiving is paused and messages are held. */
    private static void printBreaker(PrintWriter out, Map<?, ?> status) {
        if (status.get("breaker") instanceof Map<?, ?> breaker && !"off".equals(breaker.get("state"))) {
            out.println("  breaker: " + field(breaker, "state")
                    + ("closed".equals(breaker.get("state"))
                            ? ""
                            : " (" + field(breaker, "reason") + "), " + number(breaker, "held")
                                    + " messages held, receiving paused"));
        }
    }

    /**
     * A canary ramp: where it stands, then each generation's slice and outcome rates side by side; "not judged yet"
     * while a side has too few calls.
     */
    private static void printCanary(PrintWriter out, Map<?, ?> canary) {
        String state = field(canary, "status");
        if (!"running".equals(state)) {
            out.println("  canary: generation " + number(canary, "generation") + " " + state.replace('_', ' ')
                    + (canary.get("reason") == null ? "" : ": " + field(canary, "reason")) + " ("
                    + field(canary, "stepStartedAt") + ")");
            return;
        }
        int percent = Integer.parseInt(number(canary, "percent"));
        out.println("  canary: generation " + number(canary, "generation") + " on " + percent + "% of keys, steps "
                + steps(canary.get("steps")) + ", "
                + ("0".equals(number(canary, "stepEverySeconds"))
                        ? "advanced by command"
                        : "every " + number(canary, "stepEverySeconds") + " s")
                + ", this step since " + field(canary, "stepStartedAt"));
        out.println("    " + (canary.get("judged") == null ? "not judged yet" : field(canary, "judged")));
        out.println(String.format(
                java.util.Locale.ROOT,
                "    %-14s %6s %8s %9s %7s %12s %7s %7s %10s",
                "generation",
                "keys",
                "calls",
                "failures",
                "retry",
                "retryAfter",
                "none",
                "drop",
                "p99"));
        outcomes(out, "canary " + number(canary, "generation"), percent, canary.get("canaryCalls"));
        outcomes(out, "current " + number(canary, "currentGeneration"), 100 - percent, canary.get("currentCalls"));
    }

    /** The steps as whole percents: JSON numbers are read as doubles. */
    private static String steps(Object steps) {
        if (!(steps instanceof List<?> list)) {
            return Printable.text(steps);
        }
        return list.stream()
                .map(step -> Printable.text(AdminClient.whole(step)))
                .collect(java.util.stream.Collectors.joining(", ", "[", "]"));
    }

    private static void outcomes(PrintWriter out, String generation, int percent, Object counts) {
        if (!(counts instanceof Map<?, ?> c)) {
            out.println("    " + generation + ": its counts are malformed: " + Printable.text(counts));
            return;
        }
        out.println(String.format(
                java.util.Locale.ROOT,
                "    %-14s %5d%% %8s %8.1f%% %6.1f%% %11.1f%% %6.1f%% %6.1f%% %7.1f ms",
                generation,
                percent,
                number(c, "calls"),
                100 * rate(c, "failureRate"),
                100 * rate(c, "retryRate"),
                100 * rate(c, "retryAfterRate"),
                100 * rate(c, "noneRate"),
                100 * rate(c, "dropRate"),
                rate(c, "p99Millis")));
    }

    private static double rate(Map<?, ?> json, String name) {
        return json.get(name) instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    private static String field(Map<?, ?> json, String name) {
        return Printable.text(json.get(name));
    }

    private static String number(Map<?, ?> json, String name) {
        return Printable.text(AdminClient.whole(json.get(name)));
    }
}
