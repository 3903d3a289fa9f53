package dev.settle.runtime.cli;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.deadletter.Redrive;
import dev.settle.runtime.deadletter.Replay;
import dev.settle.runtime.deadletter.ReplayRules;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.HoldForFix;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code settle held list|show|drain <manifest> <subscription>}: the messages an {@code onCap: hold} subscription holds
 * for a fix (docs/dead-letters.md, "Hold for a fix"), read as {@code settle dlq} reads letters (the same loading,
 * connection and printing, {@link DlqCommand.Target}), and sent back now ({@link Redrive}, the runtime's re-drive).
 */
@Command(
        name = "held",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = {
            "Look into a subscription's held topic (onCap: hold, docs/dead-letters.md) without consuming it, or send"
                    + " its messages back now; connects as the manifest's settle run would (pulsar: section, token,"
                    + " TLS)."
        },
        subcommands = {HeldCommand.List.class, HeldCommand.Show.class, HeldCommand.Drain.class})
final class HeldCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Main.usage(spec, "settle held: say list, show or drain");
    }

    /** The held topic of a subscription with {@code onCap: hold}: what every {@code settle held} command works on. */
    static final DlqCommand.Topic HELD_TOPIC = new DlqCommand.Topic() {
        @Override
        public String command() {
            return "settle held";
        }

        @Override
        public String kind() {
            return "held topic";
        }

        @Override
        public String noun() {
            return "held message";
        }

        @Override
        public String of(DeadLetter deadLetter) {
            return deadLetter.hold().orElseThrow().topic();
        }

        /** Why {@code found} holds nothing; empty when it has {@code onCap: hold}. */
        @Override
        public Optional<String> refusal(SubscriptionSpec found) {
            return found.deadLetter().flatMap(DeadLetter::hold).isPresent()
                    ? Optional.empty()
                    : Optional.of("subscription '" + found.name() + "' has no onCap: hold, so it holds nothing (its"
                            + " capped messages go to its dead-letter topic: settle dlq reads them); add onCap: hold to"
                            + " hold them for a fix");
        }

        /** The held messages waiting for a re-drive. */
        @Override
        public Replay.Waiting waiting(PulsarClient client, DeadLetter deadLetter) throws PulsarClientException {
            return Replay.waiting(client, of(deadLetter), HoldForFix.REDRIVE_SUBSCRIPTION);
        }
    };

    @Command(
            name = "list",
            mixinStandardHelpOptions = true,
            versionProvider = Versions.class,
            description = {
                "Count the subscription's held messages waiting for a re-drive by the generation that held them, stage"
                        + " and exception class, with the oldest and newest; acknowledges nothing."
            },
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {
                "0:listed (also when the topic is empty)",
                "1:the broker cannot be reached (its words on stderr)",
                "2:the manifest is refused",
                "64:the subscription is not in the manifest or has no onCap: hold, or the command line is not"
                        + " understood"
            })
    static final class List extends DlqCommand.Listing {
        @Override
        DlqCommand.Topic topic() {
            return HELD_TOPIC;
        }

        @Override
        String columns() {
            return "generation  stage  exception";
        }

        /** A held message's row: the generation that held it (with its digest's start), its stage and exception. */
        @Override
        String row(Map<String, String> properties) {
            String generation = properties.getOrDefault(DeadLetterProperties.HELD_GENERATION, "?");
            String sha256 = properties.getOrDefault(DeadLetterProperties.HELD_SHA256, "");
            return Stream.of(
                            sha256.isEmpty()
                                    ? generation
                                    : generation + " (" + sha256.substring(0, Math.min(12, sha256.length())) + ")",
                            properties.getOrDefault(DeadLetterProperties.STAGE, "-"),
                            properties.getOrDefault(DeadLetterProperties.EXCEPTION_CLASS, "-"))
                    .map(Printable::text)
                    .collect(Collectors.joining("  "));
        }
    }

    @Command(
            name = "show",
            mixinStandardHelpOptions = true,
            versionProvider = Versions.class,
            description = {
                "Print the subscription's held messages waiting for a re-drive, oldest first: id, key, properties"
                        + " (settle.held.generation names the code that held it) and payload, shown safely (UTF-8 text"
                        + " with control characters escaped, or hex; at most --max-bytes); acknowledges nothing."
            },
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {
                "0:shown (also when the topic is empty)",
                "1:the broker cannot be reached (its words on stderr)",
                "2:the manifest is refused",
                "64:the subscription is not in the manifest or has no onCap: hold, or the command line is not"
                        + " understood"
            })
    static final class Show extends DlqCommand.Showing {
        @Option(
                names = "--limit",
                paramLabel = "N",
                defaultValue = "10",
                description = "show at most N held messages (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        DlqCommand.Topic topic() {
            return HELD_TOPIC;
        }

        @Override
        int limit() {
            return limit;
        }
    }

    @Command(
            name = "drain",
            mixinStandardHelpOptions = true,
            versionProvider = Versions.class,
            description = {
                "Send every held message back to the topic it came from (REAL_TOPIC, only a topic the subscription"
                        + " consumes) now, whatever generation held it, as the runtime's re-drive does when a new"
                        + " generation serves every key: in key order, each acknowledged on the held topic's"
                        + " subscription '" + HoldForFix.REDRIVE_SUBSCRIPTION + "' once its copy is stored. For a fix"
                        + " the runtime does not see (a dependency or a setting mended). A copy that fails again at"
                        + " its cap goes to the dead-letter topic with both causes."
            },
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {
                "0:drained (also when nothing was held)",
                "1:the broker cannot be reached, refused a copy, or a re-drive runs now (its words on stderr); what"
                        + " was acknowledged is done",
                "2:the manifest is refused",
                "64:the subscription is not in the manifest or has no onCap: hold, or the command line is not"
                        + " understood"
            })
    static final class Drain extends DlqCommand.Target implements Callable<Integer> {
        @Option(names = "--dry-run", description = "say what would be sent back; send and acknowledge nothing")
        boolean dryRun;

        @Option(
                names = "--rate",
                paramLabel = "N",
                description = "send at most N messages a second (default: the subscription's redriveRate)")
        Integer rate;

        @Override
        String name() {
            return "drain";
        }

        @Override
        DlqCommand.Topic topic() {
            return HELD_TOPIC;
        }

        @Override
        public Integer call() {
            if (rate != null && rate < 1) {
                spec.commandLine().getErr().println("settle held drain: --rate must be at least 1, was " + rate);
                spec.commandLine().getErr().flush();
                return Main.USAGE;
            }
            return run();
        }

        @Override
        int on(PrintWriter out, PrintWriter err, PulsarClient client, DeadLetter deadLetter) throws IOException {
            HoldForFix hold = deadLetter.hold().orElseThrow();
            Redrive redrive = new Redrive(
                    client,
                    hold.topic(),
                    new ReplayRules.Targets(
                            found.name(),
                            found.topics(),
                            loaded.subscriptions().stream()
                                    .flatMap(each -> each.deadLetter().stream())
                                    .flatMap(each -> Stream.concat(
                                            Stream.of(each.topic()), each.hold().map(HoldForFix::topic).stream()))
                                    .toList()),
                    rate == null ? hold.redrivePerSecond() : rate);
            String would = dryRun ? "would " : "";
            Redrive.Report report = (held, decision) -> {
                String id = held.getMessageId().toString();
                switch (decision.action()) {
                    case REDRIVE ->
                        out.println(would + "send " + id + " back to "
                                + Printable.text(decision.topic().orElseThrow()));
                    case REFUSED ->
                        out.println("refuse " + id + ": " + Printable.text(decision.why()) + "; left unacknowledged");
                    case SAME_CODE, OTHER_SUBSCRIPTION -> {
                        // Not asked for here (drain takes every generation), or another subscription's.
                    }
                }
            };
            Redrive.Counts counts = dryRun ? redrive.dryRun(held -> true, report) : redrive.run(held -> true, report);
            out.println(counts.redriven() + (dryRun ? " would be sent back, " : " sent back, ") + counts.refused()
                    + " refused (REAL_TOPIC is not a topic of the subscription), " + counts.unfit()
                    + " left: their payload does not fit their topic's schema");
            if (counts.otherSubscription() > 0) {
                out.println(counts.otherSubscription() + " left for the other subscriptions that share the held topic");
            }
            if (dryRun) {
                out.println("dry run: nothing was sent or acknowledged");
            }
            return 0;
        }
    }
}
