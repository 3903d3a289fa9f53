package dev.settle.runtime.cli;

import dev.settle.runtime.PulsarClients;
import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.deadletter.Replay;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.ManifestLoader;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.QuietClientLog;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code settle dlq list|show|replay <manifest> <subscription>}: the subscription's letters waiting in its dead-letter
 * topic ({@link Replay#waiting}: nothing acknowledged, no subscription made, a letter replayed or parked not seen
 * again), and sending them back ({@link DlqReplay}), connected as the manifest's {@code settle run} would be. The
 * client's log is held to its errors while a command runs ({@link QuietClientLog}), as {@code settle held}'s, which
 * runs through {@link Target} too.
 */
@Command(
        name = "dlq",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = {
            "Look into a subscription's dead-letter topic (docs/dead-letters.md) without consuming it, or send its"
                    + " letters back; connects as the manifest's settle run would (pulsar: section, token, TLS)."
        },
        subcommands = {DlqCommand.List.class, DlqCommand.Show.class, DlqReplay.class})
final class DlqCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        return Main.usage(spec, "settle dlq: say list, show or replay");
    }

    /**
     * The topic of a subscription a command works on, and how its messages name it: the dead-letter topic ({@link
     * #DEAD_LETTER_TOPIC}), or the held one ({@code settle held}).
     */
    interface Topic {
        /** The command's name, before its subcommand's: {@code settle dlq}. */
        String command();

        /** What the topic is called: {@code dead-letter topic}. */
        String kind();

        /** What one of its messages is called: {@code dead letter}. */
        String noun();

        /** The topic's name, of a subscription with {@code deadLetter}. */
        String of(DeadLetter deadLetter);

        /** Why {@code found}, which has a dead-letter topic, is no target of this command; empty when it is one. */
        Optional<String> refusal(SubscriptionSpec found);

        /** The messages waiting there, read without acknowledging any. */
        Replay.Waiting waiting(PulsarClient client, DeadLetter deadLetter) throws PulsarClientException;
    }

    /** {@code settle dlq}'s: the subscription's dead-letter topic. */
    static final Topic DEAD_LETTER_TOPIC = new Topic() {
        @Override
        public String command() {
            return "settle dlq";
        }

        @Override
        public String kind() {
            return "dead-letter topic";
        }

        @Override
        public String noun() {
            return "dead letter";
        }

        @Override
        public String of(DeadLetter deadLetter) {
            return deadLetter.topic();
        }

        @Override
        public Optional<String> refusal(SubscriptionSpec found) {
            return Optional.empty();
        }

        /** The letters waiting for a replay: those a replay sent back or parked are not seen again. */
        @Override
        public Replay.Waiting waiting(PulsarClient client, DeadLetter deadLetter) throws PulsarClientException {
            return Replay.waiting(client, deadLetter);
        }
    };

    /** The manifest and subscription both subcommands take. */
    abstract static class Target {
        @Parameters(index = "0", paramLabel = "MANIFEST", description = "the manifest that names the subscription")
        Path manifest;

        @Parameters(
                index = "1",
                paramLabel = "SUBSCRIPTION",
                description = "the subscription, as the manifest names it")
        String subscription;

        @Spec
        CommandSpec spec;

        /** The manifest and the subscription as {@link #run} found them, before {@link #on} is called. */
        Manifest loaded;

        SubscriptionSpec found;

        abstract String name();

        /** The topic this command works on: the dead-letter topic ({@code settle held} reads the held topic). */
        Topic topic() {
            return DEAD_LETTER_TOPIC;
        }

        /** The command as its messages name it. */
        final String command() {
            return topic().command() + " " + name();
        }

        /** Does the command's work on the dead-letter topic; its exit code. */
        abstract int on(PrintWriter out, PrintWriter err, PulsarClient client, DeadLetter deadLetter)
                throws IOException;

        final Integer run() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            try {
                try {
                    loaded = ManifestLoader.loadWithoutJars(manifest, System.getenv());
                } catch (ManifestException refused) {
                    err.println(command() + ": " + refused.getMessage());
                    return Main.INVALID;
                } catch (IOException unreadable) {
                    err.println(
                            command() + ": cannot read manifest '" + manifest + "': " + Refusals.reason(unreadable));
                    return Main.INVALID;
                }
                found = loaded.subscriptions().stream()
                        .filter(s -> s.name().equals(subscription))
                        .findFirst()
                        .orElse(null);
                if (found == null) {
                    err.println(command() + ": " + manifest + " has no subscription '" + subscription
                            + "'; it has: "
                            + loaded.subscriptions().stream()
                                    .map(SubscriptionSpec::name)
                                    .collect(Collectors.joining(", ")));
                    return Main.USAGE;
                }
                if (found.deadLetter().isEmpty()) {
                    err.println(command() + ": subscription '" + subscription + "' in " + manifest
                            + " has no deadLetterTopic; add maxAttempts and deadLetterTopic to give it one");
                    return Main.USAGE;
                }
                Optional<String> refused = topic().refusal(found);
                if (refused.isPresent()) {
                    err.println(command() + ": " + refused.get());
                    return Main.USAGE;
                }
                DeadLetter deadLetter = found.deadLetter().get();
                Optional<String> unreachable =
                        ServiceUrlProbe.unreachable(loaded.pulsar().serviceUrl());
                if (unreachable.isPresent()) {
                    err.println(command() + ": " + unreachable.get() + " (pulsar.serviceUrl in " + manifest + ")");
                    return Main.UNREACHABLE;
                }
                // The client's warnings would share the console with what is printed (a list or show after a replay
                // is refused its own reading subscription and takes the replay's; a consumer's reconnect): the
                // command says what it read, and its own errors what failed.
                try (QuietClientLog quiet = QuietClientLog.untilClosed();
                        PulsarClient client = PulsarClients.create(loaded.pulsar())) {
                    // The first line printed: what is read.
                    out.println(
                            topic().kind() + " " + topic().of(deadLetter) + " of subscription '" + subscription + "'");
                    return on(out, err, client, deadLetter);
                }
            } catch (IOException failed) {
                err.println(command() + ": "
                        + (failed instanceof PulsarClientException pulsar
                                ? ConnectionProblems.describe(pulsar)
                                : Refusals.reason(failed)));
                return 1;
            } finally {
                out.flush();
                err.flush();
            }
        }

        /**
         * The next of {@code letters} that is this subscription's ({@link DeadLetterProperties#belongsTo}); null at
         * the end. {@code others} counts the letters of other subscriptions passed over.
         */
        Message<byte[]> next(Replay.Waiting letters, int[] others) throws PulsarClientException {
            for (Message<byte[]> letter = letters.next(); letter != null; letter = letters.next()) {
                if (DeadLetterProperties.belongsTo(letter.getProperties(), subscription)) {
                    return letter;
                }
                others[0]++;
            }
            return null;
        }
    }

    /**
     * A command that reads the letters waiting for a replay ({@link Replay#waiting}: those a replay sent back or parked
     * are not seen again), the subscription's only: nothing acknowledged, no subscription made.
     */
    abstract static class Reading extends Target {
        abstract void read(PrintWriter out, Replay.Waiting letters) throws PulsarClientException;

        @Override
        final int on(PrintWriter out, PrintWriter err, PulsarClient client, DeadLetter deadLetter) throws IOException {
            try (Replay.Waiting letters = topic().waiting(client, deadLetter)) {
                read(out, letters);
            }
            return 0;
        }
    }

    /**
     * {@code list}: every message waiting that is this subscription's, counted by its row (columns named by {@link
     * #columns}), with the oldest and newest.
     */
    abstract static class Listing extends Reading implements Callable<Integer> {
        /** The names of the columns {@link #row} fills. */
        abstract String columns();

        /** The row a message with {@code properties} is counted in. */
        abstract String row(Map<String, String> properties);

        @Override
        final String name() {
            return "list";
        }

        @Override
        public final Integer call() {
            return run();
        }

        @Override
        final void read(PrintWriter out, Replay.Waiting waiting) throws PulsarClientException {
            Map<String, Integer> counts = new TreeMap<>();
            long oldest = Long.MAX_VALUE;
            long newest = Long.MIN_VALUE;
            int total = 0;
            int[] others = {0};
            for (Message<byte[]> message = next(waiting, others); message != null; message = next(waiting, others)) {
                total++;
                counts.merge(row(message.getProperties()), 1, Integer::sum);
                oldest = Math.min(oldest, message.getPublishTime());
                newest = Math.max(newest, message.getPublishTime());
            }
            out.println(total + " " + topic().noun() + "s");
            if (others[0] > 0) {
                out.println(
                        others[0] + " more of other subscriptions that share the " + topic().kind() + ", not counted");
            }
            if (total > 0) {
                out.println("oldest: " + Instant.ofEpochMilli(oldest) + ", newest: " + Instant.ofEpochMilli(newest));
                out.println("count  " + columns());
                counts.forEach((key, count) -> out.println(count + "  " + key));
            }
        }
    }

    @Command(
            name = "list",
            mixinStandardHelpOptions = true,
            versionProvider = Versions.class,
            description = {
                "Count the subscription's dead letters waiting for a replay (not those replayed or parked before) by"
                        + " stage and exception class, with the oldest and newest; acknowledges nothing.",
                "A letter with no settle.stage was written by the Pulsar client (an ack timeout): its stage shows as"
                        + " 'none (client)'."
            },
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {
                "0:listed (also when the topic is empty)",
                "1:the broker cannot be reached (its words on stderr)",
                "2:the manifest is refused",
                "64:the subscription is not in the manifest or has no deadLetterTopic, or the command line is not"
                        + " understood"
            })
    static final class List extends Listing {
        @Override
        String columns() {
            return "stage  exception";
        }

        @Override
        String row(Map<String, String> properties) {
            return Printable.text(properties.getOrDefault(DeadLetterProperties.STAGE, "none (client)"))
                    + "  "
                    + Printable.text(properties.getOrDefault(DeadLetterProperties.EXCEPTION_CLASS, "-"));
        }
    }

    @Command(
            name = "show",
            mixinStandardHelpOptions = true,
            versionProvider = Versions.class,
            description = {
                "Print the subscription's dead letters waiting for a replay, oldest first: id, key, properties and"
                        + " payload, shown safely (UTF-8 text with control characters escaped, or hex; at most"
                        + " --max-bytes); acknowledges nothing."
            },
            exitCodeListHeading = "%nExit codes:%n",
            exitCodeList = {
                "0:shown (also when the topic is empty)",
                "1:the broker cannot be reached (its words on stderr)",
                "2:the manifest is refused",
                "64:the subscription is not in the manifest or has no deadLetterTopic, or the command line is not"
                        + " understood"
            })
    static final class Show extends Showing {
        @Option(
                names = "--limit",
                paramLabel = "N",
                defaultValue = "10",
                description = "show at most N dead letters (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        int limit() {
            return limit;
        }
    }

    /**
     * {@code show}: the first {@code --limit} messages waiting that are this subscription's, oldest first, each printed
     * safely. Each command declares its own {@code --limit}, so that its help names what it shows.
     */
    abstract static class Showing extends Reading implements Callable<Integer> {
        @Mixin
        PayloadLimit payload;

        abstract int limit();

        @Override
        final String name() {
            return "show";
        }

        /** Refuses a {@code --limit} or {@code --max-bytes} below 1 with the usage code. */
        @Override
        public final Integer call() {
            if (limit() < 1 || !payload.valid()) {
                spec.commandLine().getErr().println(command() + ": --limit and --max-bytes must be at least 1");
                spec.commandLine().getErr().flush();
                return Main.USAGE;
            }
            return run();
        }

        @Override
        final void read(PrintWriter out, Replay.Waiting waiting) throws PulsarClientException {
            int shown = 0;
            int[] others = {0};
            for (Message<byte[]> message = next(waiting, others);
                    message != null && shown < limit();
                    message = shown < limit() ? next(waiting, others) : null) {
                shown++;
                print(out, topic().noun(), shown, message, payload);
            }
        }

        /** One message as {@code show} prints it: id, key, properties and payload, safely. */
        private static void print(
                PrintWriter out, String what, int number, Message<byte[]> message, PayloadLimit payload) {
            out.println("----- " + what + " " + number + ": " + message.getMessageId() + ", published "
                    + Instant.ofEpochMilli(message.getPublishTime()));
            out.println("key: " + (message.hasKey() ? Printable.text(message.getKey()) : "(none)"));
            Map<String, String> properties = new TreeMap<>(message.getProperties());
            properties.forEach(
                    (name, value) -> out.println("  " + Printable.text(name) + ": " + Printable.text(value)));
            out.println("payload (" + message.getData().length + " bytes): " + payload.show(message.getData()));
        }
    }
}
