package dev.settle.runtime.cli;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.deadletter.Replay;
import dev.settle.runtime.deadletter.ReplayRules;
import dev.settle.runtime.manifest.DeadLetter;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code settle dlq replay}: its options and what it prints; the loop is {@link Replay}'s (letters sent back to their
 * {@code REAL_TOPIC} when it is a topic the subscription consumes, {@link ReplayRules.Targets}, each acknowledged only
 * once its copy is stored; a letter replayed {@code --max-replays} times parked instead).
 */
@Command(
        name = "replay",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = {
            "Send dead letters back to the topic they came from (REAL_TOPIC) with their key and properties and"
                    + " settle.replay.count one higher, only to a topic the subscription consumes; each is"
                    + " acknowledged on the durable subscription '"
                    + DlqReplay.SUBSCRIPTION + "' of the dead-letter topic only once its copy is stored, so a"
                    + " killed run resumes. A letter already replayed --max-replays times goes to the parking topic"
                    + " <deadLetterTopic>-parked instead. Letters --where leaves out, letters with no REAL_TOPIC, and"
                    + " letters whose REAL_TOPIC the subscription does not consume (or is Settle's own), stay"
                    + " unacknowledged and are counted."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:replayed (also when there was nothing to replay)",
            "1:the broker cannot be reached or refused a copy (its words on stderr); what was acknowledged is done",
            "2:the manifest is refused",
            "64:the subscription is not in the manifest or has no deadLetterTopic, or the command line is not"
                    + " understood"
        })
final class DlqReplay extends DlqCommand.Target implements Callable<Integer> {
    /** The replay's own durable subscription on the dead-letter topic. */
    static final String SUBSCRIPTION = Replay.SUBSCRIPTION;

    @Option(
            names = "--where",
            paramLabel = "KEY=VALUE",
            description = "replay only letters with this stage=STAGE or exception=CLASS; repeat it: one value of each"
                    + " key given must match (stage=none matches the client's letters)")
    List<String> where = new ArrayList<>();

    @Option(names = "--dry-run", description = "say what would be replayed or parked; send and acknowledge nothing")
    boolean dryRun;

    @Option(
            names = "--rate",
            paramLabel = "N/s",
            description = "send at most N letters a second (default: as fast as the broker stores them)")
    String rate;

    @Option(names = "--limit", paramLabel = "N", description = "replay or park at most N letters, then stop")
    Integer limit;

    @Option(
            names = "--max-replays",
            paramLabel = "N",
            defaultValue = "3",
            description = "park a letter already replayed N times (default: ${DEFAULT-VALUE})")
    int maxReplays;

    private long perSecond;

    @Override
    String name() {
        return "replay";
    }

    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        try {
            ReplayRules.where(where, maxReplays);
            perSecond = rate == null ? 0 : perSecond(rate);
            if (limit != null && limit < 1) {
                throw new IllegalArgumentException("--limit must be at least 1, was " + limit);
            }
        } catch (IllegalArgumentException misunderstood) {
            err.println("settle dlq replay: " + misunderstood.getMessage());
            err.flush();
            return Main.USAGE;
        }
        return run();
    }

    /** {@code 100/s} or {@code 100}. */
    private static long perSecond(String rate) {
        String number = rate.endsWith("/s") ? rate.substring(0, rate.length() - 2) : rate;
        try {
            long value = Long.parseLong(number.strip());
            if (value >= 1) {
                return value;
            }
        } catch (NumberFormatException notANumber) {
            // Said below.
        }
        throw new IllegalArgumentException("--rate '" + rate + "': say how many letters a second, as 100/s");
    }

    @Override
    int on(PrintWriter out, PrintWriter err, PulsarClient client, DeadLetter deadLetter) throws IOException {
        Replay replay = new Replay(
                client,
                deadLetter,
                ReplayRules.of(where, maxReplays, targets()),
                limit == null ? Integer.MAX_VALUE : limit,
                perSecond);
        String would = dryRun ? "would " : "";
        Replay.Report report = new Replay.Report() {
            @Override
            public void decided(Message<byte[]> letter, ReplayRules.Decision decision) {
                say(out, letter, decision, replay.parkingTopic(), would);
            }

            @Override
            public void unfit(Message<byte[]> letter, String topic, String why) {
                out.println("leave " + letter.getMessageId() + ": its payload does not fit the schema of "
                        + Printable.text(topic) + " (" + Printable.text(why) + ")");
            }
        };
        Replay.Counts counts = dryRun ? replay.dryRun(report) : replay.run(report);
        summary(out, counts, dryRun ? "would be " : "");
        if (counts.unfit() > 0) {
            out.println(counts.unfit() + " left: their payload does not fit their topic's schema");
        }
        if (counts.moved() == 0) {
            out.println(whyNone(counts, deadLetter, dryRun ? "would be " : ""));
        }
        if (dryRun) {
            out.println("dry run: nothing was sent or acknowledged");
        }
        return 0;
    }

    /** The subscription's own topics, and every dead-letter topic of the manifest as Settle's. */
    private ReplayRules.Targets targets() {
        return new ReplayRules.Targets(
                found.name(),
                found.topics(),
                loaded.subscriptions().stream()
                        .flatMap(each -> each.deadLetter().stream())
                        .map(DeadLetter::topic)
                        .toList());
    }

    private static void say(
            PrintWriter out, Message<byte[]> letter, ReplayRules.Decision decision, String parking, String would) {
        String id = letter.getMessageId().toString();
        switch (decision.action()) {
            case REPLAY ->
                out.println(would + "replay " + id + " to "
                        + Printable.text(decision.topic().get()) + " (replay "
                        + decision.properties().get(DeadLetterProperties.REPLAY_COUNT) + ")");
            case PARK ->
                out.println(would + "park " + id + " in " + parking + " (replayed "
                        + ReplayRules.replayCount(decision.properties()) + " times already)");
            case UNREPLAYABLE -> out.println("leave " + id + ": it has no REAL_TOPIC to go back to");
            case FOREIGN ->
                out.println("refuse " + id + ": " + Printable.text(decision.why()) + "; left unacknowledged");
            case SKIP, OTHER_SUBSCRIPTION -> {
                // Not what was asked for, or another subscription's: said only in the summary.
            }
        }
    }

    /** Why a run replayed and parked nothing, so that a 0 is never left unexplained. */
    private String whyNone(Replay.Counts counts, DeadLetter deadLetter, String would) {
        if (counts.ofTheSubscription() == 0) {
            return "nothing " + would + "replayed: no dead letter of subscription '" + found.name() + "' is waiting on "
                    + deadLetter.topic() + " (a letter replayed or parked before is not seen again; settle dlq list"
                    + " counts the ones waiting)";
        }
        return "nothing " + would + "replayed: each of the " + counts.ofTheSubscription()
                + " letters waiting was left, for the reasons counted above";
    }

    private static void summary(PrintWriter out, Replay.Counts counts, String would) {
        out.println(counts.of(ReplayRules.Action.REPLAY) + " " + would + "replayed, "
                + counts.of(ReplayRules.Action.PARK) + " " + would + "parked, "
                + counts.of(ReplayRules.Action.SKIP) + " left by --where, "
                + counts.of(ReplayRules.Action.UNREPLAYABLE) + " left without a REAL_TOPIC, "
                + counts.of(ReplayRules.Action.FOREIGN) + " " + would
                + "refused: REAL_TOPIC is not a topic of the subscription");
        if (counts.of(ReplayRules.Action.OTHER_SUBSCRIPTION) > 0) {
            out.println(counts.of(ReplayRules.Action.OTHER_SUBSCRIPTION)
                    + " left for the other subscriptions that share the dead-letter topic (their settle.subscription)");
        }
    }
}
