package dev.settle.runtime.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SchemaSerializationException;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code settle produce <topic> [value]}: publishes test messages, as {@code pulsar-client produce} does, without
 * installing Pulsar. The payload is the value, a file, or each line of stdin; each is sent {@code --count} times.
 */
@Command(
        name = "produce",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = {
            "Publish messages to a topic: the VALUE given, the bytes of --file, or else one message per line of stdin;"
                    + " each --count times. Prints each message's id.",
            "Connects as --manifest's settle run would, or to --service-url (default pulsar://localhost:6650)."
        },
        exitCodeListHeading = "%nExit codes:%n")
final class ProduceCommand implements Callable<Integer> {
    /** How long a send waits for the broker before the command gives up. */
    static final int SEND_TIMEOUT_SECONDS = 30;

    @Parameters(index = "0", paramLabel = "TOPIC", description = "the topic, such as persistent://public/default/names")
    String topic;

    @Parameters(index = "1", arity = "0..1", paramLabel = "VALUE", description = "the payload, as UTF-8 text")
    String value;

    @Option(names = "--file", paramLabel = "FILE", description = "the payload: this file's bytes, as they are")
    Path file;

    @Option(names = "--key", paramLabel = "KEY", description = "the message key")
    String key;

    @Option(names = "--property", paramLabel = "NAME=VALUE", description = "a message property; repeat for more")
    List<String> properties = new ArrayList<>();

    @Option(
            names = "--count",
            paramLabel = "N",
            defaultValue = "1",
            description = "send each payload N times (default: ${DEFAULT-VALUE})")
    int count;

    @Option(
            names = "--schema",
            paramLabel = "SCHEMA",
            defaultValue = "bytes",
            description = "bytes: the payload as it is, no schema (any handler reads it; default); string: Pulsar's"
                    + " STRING schema; auto: checked against the topic's schema (JSON, Avro...) and refused if it does"
                    + " not fit")
    String schema;

    @Mixin
    PulsarConnection connection;

    @Spec
    CommandSpec spec;

    private final InputStream stdin;

    ProduceCommand(InputStream stdin) {
        this.stdin = stdin;
    }

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            return produce(out);
        } catch (PulsarConnection.Refused refused) {
            err.println("settle produce: " + refused.getMessage());
            return refused.exitCode;
        } catch (PulsarClientException failed) {
            err.println("settle produce: " + topic + ": " + ConnectionProblems.describe(failed));
            return 1;
        } catch (SchemaSerializationException misfit) {
            // --schema auto: the client checks the payload against the topic's schema before it sends anything.
            err.println("settle produce: " + topic + ": the payload does not fit the topic's schema ("
                    + ConnectionProblems.describe(misfit) + "); send it as the schema says, or without --schema auto");
            return 1;
        } finally {
            out.flush();
            err.flush();
        }
    }

    private int produce(PrintWriter out) throws PulsarConnection.Refused, PulsarClientException, InterruptedException {
        if (count < 1) {
            throw new PulsarConnection.Refused("--count must be at least 1, was " + count, Main.USAGE);
        }
        if (value != null && file != null) {
            throw new PulsarConnection.Refused("give the payload as VALUE or as --file, not both", Main.USAGE);
        }
        Map<String, String> props = properties();
        Schema<byte[]> bytes = schema();
        List<byte[]> payloads = payloads();
        var settings = connection.settings();
        try (PulsarConnection.Released released = connection.open(settings);
                Producer<byte[]> producer = released.client()
                        .newProducer(bytes)
                        .topic(topic)
                        .sendTimeout(SEND_TIMEOUT_SECONDS, TimeUnit.SECONDS)
                        .enableBatching(false)
                        .create()) {
            int sent = 0;
            for (byte[] payload : payloads) {
                for (int i = 0; i < count; i++) {
                    TypedMessageBuilder<byte[]> message =
                            producer.newMessage().value(payload).properties(props);
                    if (key != null) {
                        message.key(key);
                    }
                    MessageId id = message.send();
                    sent++;
                    out.println("sent " + id + " (" + payload.length + " bytes)");
                }
            }
            out.println("settle produce: " + sent + (sent == 1 ? " message" : " messages") + " to " + topic);
            return 0;
        }
    }

    private Map<String, String> properties() throws PulsarConnection.Refused {
        Map<String, String> props = new LinkedHashMap<>();
        for (String property : properties) {
            int equals = property.indexOf('=');
            if (equals < 1) {
                throw new PulsarConnection.Refused("--property must be NAME=VALUE, was '" + property + "'", Main.USAGE);
            }
            props.put(property.substring(0, equals), property.substring(equals + 1));
        }
        return props;
    }

    private Schema<byte[]> schema() throws PulsarConnection.Refused {
        switch (schema) {
            case "bytes":
                return Schema.BYTES;
            case "auto":
                return Schema.AUTO_PRODUCE_BYTES();
            case "string":
                // The bytes as given, under Pulsar's STRING schema (registered on a topic that has none).
                return Schema.AUTO_PRODUCE_BYTES(Schema.STRING);
            default:
                throw new PulsarConnection.Refused(
                        "--schema must be bytes, string or auto, was '" + schema + "'", Main.USAGE);
        }
    }

    private List<byte[]> payloads() throws PulsarConnection.Refused {
        if (value != null) {
            return List.of(value.getBytes(StandardCharsets.UTF_8));
        }
        if (file != null) {
            try {
                return List.of(Files.readAllBytes(file));
            } catch (IOException unreadable) {
                throw new PulsarConnection.Refused(
                        "cannot read --file '" + file + "': " + Refusals.reason(unreadable), Main.INVALID);
            }
        }
        List<byte[]> lines = new ArrayList<>();
        try {
            BufferedReader reader = new BufferedReader(new InputStreamReader(stdin, StandardCharsets.UTF_8));
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                lines.add(line.getBytes(StandardCharsets.UTF_8));
            }
        } catch (IOException unreadable) {
            throw new PulsarConnection.Refused("cannot read stdin: " + unreadable.getMessage(), Main.INVALID);
        }
        return lines;
    }
}
