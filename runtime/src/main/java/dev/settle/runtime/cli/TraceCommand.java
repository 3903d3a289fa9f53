package dev.settle.runtime.cli;

import dev.settle.runtime.PulsarClients;
import dev.settle.runtime.deadletter.Origin;
import dev.settle.runtime.deadletter.ReplayRules;
import dev.settle.runtime.journal.JournalBatch;
import dev.settle.runtime.journal.JournalRecord;
import dev.settle.runtime.journal.Story;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.ManifestLoader;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.QuietClientLog;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Reader;
import org.apache.pulsar.client.api.Schema;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code settle trace <manifest> <subscription> <message-id | --key K | --payload-sha S>}: the story of a message
 * from the subscription's settlement journal (docs/trace.md) and its dead-letter and parking topics, read with
 * readers from {@code --since} ago (never from the topic's start), in time order, ending in its disposition.
 */
@Command(
        name = "trace",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = {
            "Tell the story of a message from the subscription's settlement journal (journal: true): every attempt on"
                    + " every instance and generation, the attempts no record tells of, its dead letter, replays,"
                    + " and how it ended. Reads from --since ago; acknowledges nothing."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:the story was told",
            "1:the broker cannot be reached (its words on stderr)",
            "2:the manifest is refused",
            "3:no journal record of the message since --since",
            "64:the subscription is not in the manifest or keeps no journal, or the command line is not understood"
        })
final class TraceCommand extends PrintingCommand {
    static final int NOT_FOUND = 3;

    @Parameters(index = "0", paramLabel = "MANIFEST", description = "the manifest that names the subscription")
    Path manifest;

    @Parameters(index = "1", paramLabel = "SUBSCRIPTION", description = "the subscription, as the manifest names it")
    String subscription;

    @Parameters(
            index = "2",
            arity = "0..1",
            paramLabel = "MESSAGE-ID",
            description = "the message id (as settle logs it); or say --key or --payload-sha")
    String messageId;

    @Option(names = "--key", paramLabel = "K", description = "every message with this key")
    String key;

    @Option(names = "--payload-sha", paramLabel = "S", description = "the message whose payload has this SHA-256")
    String payloadSha;

    @Option(names = "--json", description = "one JSON object per message, one a line")
    boolean json;

    @Option(
            names = "--since",
            paramLabel = "DURATION",
            defaultValue = "24h",
            description = "how far back to read (default: ${DEFAULT-VALUE})")
    String since;

    @Option(names = "--follow", description = "with --key: go on printing the key's new records until stopped")
    boolean follow;

    @Override
    int run(PrintWriter out, PrintWriter err) {
        try {
            Duration back;
            try {
                back = DurationText.parse(since);
            } catch (IllegalArgumentException e) {
                err.println("settle trace: --since '" + Printable.text(since) + "': " + e.getMessage());
                return Main.USAGE;
            }
            long asked = java.util.stream.Stream.of(messageId, key, payloadSha)
                    .filter(java.util.Objects::nonNull)
                    .count();
            if (asked != 1) {
                err.println("settle trace: say which message: a MESSAGE-ID, --key K or --payload-sha S (one of them)");
                return Main.USAGE;
            }
            if (follow && key == null) {
                err.println("settle trace: --follow needs --key K: it follows the new records of one key");
                return Main.USAGE;
            }
            Manifest loaded;
            try {
                loaded = ManifestLoader.loadWithoutJars(manifest, System.getenv());
            } catch (ManifestException refused) {
                err.println("settle trace: " + refused.getMessage());
                return Main.INVALID;
            } catch (IOException unreadable) {
                err.println("settle trace: cannot read manifest '" + manifest + "': " + Refusals.reason(unreadable));
                return Main.INVALID;
            }
            Optional<SubscriptionSpec> found = loaded.subscriptions().stream()
                    .filter(s -> s.name().equals(subscription))
                    .findFirst();
            if (found.isEmpty()) {
                err.println("settle trace: " + manifest + " has no subscription '" + Printable.text(subscription)
                        + "'; it has: "
                        + loaded.subscriptions().stream()
                                .map(SubscriptionSpec::name)
                                .collect(Collectors.joining(", ")));
                return Main.USAGE;
            }
            SubscriptionSpec s = found.get();
            if (s.journal().isEmpty()) {
                err.println("settle trace: subscription '" + subscription + "' in " + manifest + " keeps no journal;"
                        + " add journal: true to it (records are written from then on)");
                return Main.USAGE;
            }
            Optional<String> unreachable =
                    ServiceUrlProbe.unreachable(loaded.pulsar().serviceUrl());
            if (unreachable.isPresent()) {
                err.println("settle trace: " + unreachable.get() + " (pulsar.serviceUrl in " + manifest + ")");
                return Main.UNREACHABLE;
            }
            long from = System.currentTimeMillis() - back.toMillis();
            // The client's warnings would share the console with the story (a seek's reconnect, a lookup of a
            // dead-letter topic that was never made): the story says what it found, and its own errors what failed.
            try (QuietClientLog quiet = QuietClientLog.untilClosed();
                    PulsarClient client = PulsarClients.create(loaded.pulsar())) {
                return trace(out, err, client, s, from);
            }
        } catch (IOException failed) {
            err.println("settle trace: "
                    + (failed instanceof PulsarClientException pulsar
                            ? ConnectionProblems.describe(pulsar)
                            : Refusals.reason(failed)));
            return Main.UNREACHABLE;
        } finally {
            out.flush();
            err.flush();
        }
    }

    private int trace(PrintWriter out, PrintWriter err, PulsarClient client, SubscriptionSpec s, long from)
            throws IOException {
        String journalTopic = s.journal().get();
        List<JournalRecord> records = new ArrayList<>();
        // Each record's format is its message's (settle.journal), which --json shows: one journal may hold several.
        Map<JournalRecord, String> formats = new IdentityHashMap<>();
        try (Reader<byte[]> reader = reader(client, journalTopic, from)) {
            for (Message<byte[]> m = next(reader); m != null; m = next(reader)) {
                String format = JournalBatch.formatOf(m.getProperties());
                for (JournalRecord r : JournalBatch.read(m.getProperties(), m.getData())) {
                    if (r.subscription().equals(s.name())) {
                        records.add(r);
                        formats.put(r, format);
                    }
                }
            }
            Set<String> origins = new LinkedHashSet<>();
            records.stream().filter(this::asked).forEach(r -> origins.add(r.origin()));
            List<Story.Letter> letters = new ArrayList<>();
            if (s.deadLetter().isPresent() && !origins.isEmpty()) {
                String dlq = s.deadLetter().get().topic();
                letters.addAll(letters(client, dlq, from, false, origins::contains));
                letters.addAll(letters(client, ReplayRules.parkingTopic(dlq), from, true, origins::contains));
            }
            if (origins.isEmpty() && !follow) {
                err.println("settle trace: no journal record in " + journalTopic + " of " + asked() + " since "
                        + Instant.ofEpochMilli(from) + "; try a longer --since");
                return NOT_FOUND;
            }
            for (String origin : origins) {
                print(out, Story.of(origin, records, letters, formats::get));
            }
            out.flush();
            if (follow) {
                while (!Thread.currentThread().isInterrupted()) {
                    Message<byte[]> m = reader.readNext(1, TimeUnit.SECONDS);
                    if (m != null) {
                        String format = JournalBatch.formatOf(m.getProperties());
                        for (JournalRecord r : JournalBatch.read(m.getProperties(), m.getData())) {
                            if (r.subscription().equals(s.name()) && asked(r)) {
                                print(out, Story.handled(r, format));
                                out.flush();
                            }
                        }
                    }
                }
            }
        }
        return 0;
    }

    private boolean asked(JournalRecord r) {
        if (key != null) {
            return key.equals(r.key());
        }
        if (payloadSha != null) {
            return payloadSha.equalsIgnoreCase(r.payloadSha256());
        }
        String id = messageId.strip();
        return r.messageId().equals(id) || r.origin().equals(id) || r.origin().endsWith("@" + id);
    }

    private String asked() {
        if (key != null) {
            return "key '" + Printable.text(key) + "'";
        }
        if (payloadSha != null) {
            return "payload SHA-256 " + Printable.text(payloadSha);
        }
        return "message " + Printable.text(messageId);
    }

    private static List<Story.Letter> letters(
            PulsarClient client, String topic, long from, boolean parked, Predicate<String> wanted) throws IOException {
        List<Story.Letter> letters = new ArrayList<>();
        if (!exists(client, topic)) {
            // Nothing was ever dead-lettered or parked: a reader would make the topic (the broker's auto-creation).
            return letters;
        }
        try (Reader<byte[]> reader = reader(client, topic, from)) {
            for (Message<byte[]> m = next(reader); m != null; m = next(reader)) {
                String origin = Origin.ofLetter(m.getProperties());
                if (wanted.test(origin)) {
                    letters.add(new Story.Letter(
                            Instant.ofEpochMilli(m.getPublishTime()),
                            topic,
                            m.getMessageId().toString(),
                            origin,
                            parked));
                }
            }
        }
        return letters;
    }

    /**
     * Whether {@code topic} exists, asked without making it: the lookup with metadata auto-creation off (Pulsar's
     * PIP-344) answers not-found for a topic that does not, where a reader's subscribe would create it.
     */
    private static boolean exists(PulsarClient client, String topic) throws IOException {
        try {
            client.getPartitionsForTopic(topic, false).get(30, TimeUnit.SECONDS);
            return true;
        } catch (ExecutionException e) {
            PulsarClientException cause = PulsarClientException.unwrap(e.getCause());
            // Pulsar 4.2.4's binary lookup answers a missing topic as TopicDoesNotExist; its HTTP one as NotFound.
            if (cause instanceof PulsarClientException.TopicDoesNotExistException
                    || cause instanceof PulsarClientException.NotFoundException) {
                return false;
            }
            throw cause;
        } catch (TimeoutException e) {
            throw new IOException("the broker did not say within 30 s whether " + topic + " exists", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted asking whether " + topic + " exists", e);
        }
    }

    /** How often {@link #available} asks before it gives up: 0.2 + 0.4 + 0.6 + 0.8 s of waits between them. */
    private static final int LOOKS = 5;

    /** A reader from {@code from} (publish time): a journal is read from where the story can be, never its start. */
    private static Reader<byte[]> reader(PulsarClient client, String topic, long from) throws PulsarClientException {
        Reader<byte[]> reader = client.newReader(Schema.BYTES)
                .topic(topic)
                // A journal message holds up to 256 KB of records: the default 1 000 prefetched could be 256 MB.
                .receiverQueueSize(100)
                .startMessageId(org.apache.pulsar.client.api.MessageId.earliest)
                .create();
        // A seek, not the builder's rollback (whole seconds): after a rollback that skips every message the client
        // still counts from the earliest, so hasMessageAvailable stays true with nothing to read.
        reader.seek(from);
        return reader;
    }

    /** The next message up to the end of the topic as it was when asked; null at its end. */
    private static Message<byte[]> next(Reader<byte[]> reader) throws PulsarClientException {
        while (available(reader)) {
            Message<byte[]> message = reader.readNext(5, TimeUnit.SECONDS);
            if (message != null) {
                return message;
            }
        }
        return null;
    }

    /**
     * {@code hasMessageAvailable}, asked again when it fails: the seek to {@code --since} closes the reader's consumer
     * on the broker, and a look at the topic's end made while the consumer comes back fails ("... gets the last message
     * id was failed": {@code JournalIT}, once in a full build). At most {@link #LOOKS} looks, 0.2 s apart and more.
     */
    private static boolean available(Reader<byte[]> reader) throws PulsarClientException {
        for (int look = 1; ; look++) {
            try {
                return reader.hasMessageAvailable();
            } catch (PulsarClientException.AlreadyClosedException closed) {
                throw closed;
            } catch (PulsarClientException failed) {
                if (look == LOOKS) {
                    throw failed;
                }
                try {
                    // Time for the consumer to come back; a command has no clock of its own to wait on.
                    Thread.sleep(200L * look);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw failed;
                }
            }
        }
    }

    private void print(PrintWriter out, Story story) {
        if (json) {
            out.println(json(story));
            return;
        }
        out.println("message " + Printable.text(story.origin()));
        story.steps().forEach(step -> print(out, step));
        out.println("  " + Printable.text(story.disposition()));
    }

    /** The story as one JSON object: its origin, its steps with every field (the record's format too), how it ended. */
    static String json(Story story) {
        StringBuilder line = new StringBuilder("{\"origin\":").append(quote(story.origin()));
        line.append(",\"steps\":[");
        for (int i = 0; i < story.steps().size(); i++) {
            Story.Step step = story.steps().get(i);
            line.append(i == 0 ? "" : ",")
                    .append("{\"at\":")
                    .append(quote(step.at().toString()))
                    .append(",\"kind\":")
                    .append(quote(step.kind()));
            step.fields()
                    .forEach((name, value) ->
                            line.append(',').append(quote(name)).append(':').append(quote(value)));
            line.append('}');
        }
        return line.append("],\"disposition\":")
                .append(quote(story.disposition()))
                .append('}')
                .toString();
    }

    private void print(PrintWriter out, Story.Step step) {
        Map<String, String> f = step.fields();
        String text = switch (step.kind()) {
            case "handled" ->
                f.get("instance") + "  generation " + f.get("generation") + "  attempt "
                        + f.get("attempt") + "  " + f.get("outcome")
                        + (f.containsKey("deadLetterTopic") ? " to " + f.get("deadLetterTopic") : "")
                        + (f.containsKey("failureStage")
                                ? " (" + f.get("failureStage")
                                        + (f.containsKey("causeClass") ? ": " + f.get("causeClass") : "") + ")"
                                : "")
                        + (f.containsKey("transaction") ? ", transaction " + f.get("transaction") : "")
                        + "  " + f.get("messageId") + "  " + f.get("code");
            case "gap" -> "attempt " + f.get("attempt") + " of " + f.get("messageId") + ": " + f.get("why");
            case "replayed" -> "replayed to " + f.get("topic") + " as " + f.get("messageId");
            case "dead letter" -> "dead letter stored in " + f.get("topic") + " as " + f.get("messageId");
            case "parked" -> "parked in " + f.get("topic") + " as " + f.get("messageId");
            default -> step.kind() + " " + f;
        };
        out.println("  " + step.at() + "  " + Printable.text(text));
    }

    /**
     * {@code value} as a JSON string, every control and format character (and line separators) as {@code \\uXXXX},
     * so the JSON line shows on a terminal as safely as the text form ({@link Printable}).
     */
    static String quote(String value) {
        StringBuilder quoted = new StringBuilder(value.length() + 2).append('"');
        value.chars().forEach(c -> {
            int type = Character.getType(c);
            if (c == '"' || c == '\\') {
                quoted.append('\\').append((char) c);
            } else if (c < 0x20
                    || type == Character.CONTROL
                    || type == Character.FORMAT
                    || type == Character.LINE_SEPARATOR
                    || type == Character.PARAGRAPH_SEPARATOR
                    // Both halves of a pair escaped still read as the one character in JSON.
                    || type == Character.SURROGATE) {
                quoted.append(String.format("\\u%04x", c));
            } else {
                quoted.append((char) c);
            }
        });
        return quoted.append('"').toString();
    }
}
