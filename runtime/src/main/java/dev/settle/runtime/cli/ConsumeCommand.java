package dev.settle.runtime.cli;

import java.io.PrintWriter;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code settle consume <topic>}: receives, prints and acknowledges messages, as {@code pulsar-client consume} does:
 * each message's key, properties, attempt and payload, shown safely ({@link SafePayload}).
 */
@Command(
        name = "consume",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = {
            "Receive messages from a topic, print each (id, key, properties, attempt, payload) and acknowledge it;"
                    + " stops after --count messages (with --count 0, at Ctrl-C).",
            "The payload is shown as UTF-8 text with control characters escaped, or as hex when it is not UTF-8, at"
                    + " most --max-bytes of it. The subscription starts at the earliest message the first time, and"
                    + " then goes on where it stopped.",
            "Connects as --manifest's settle run would, or to --service-url (default pulsar://localhost:6650)."
        },
        exitCodeListHeading = "%nExit codes:%n")
final class ConsumeCommand extends PrintingCommand {
    @Parameters(index = "0", paramLabel = "TOPIC", description = "the topic, such as persistent://public/default/names")
    String topic;

    @Option(
            names = "--subscription",
            paramLabel = "NAME",
            defaultValue = "settle-consume",
            description = "the subscription to read with (default: ${DEFAULT-VALUE}); a handler's own subscription"
                    + " would take its messages")
    String subscription;

    @Option(
            names = "--count",
            paramLabel = "N",
            defaultValue = "1",
            description = "stop after N messages; 0: until Ctrl-C (default: ${DEFAULT-VALUE})")
    int count;

    @Option(
            names = "--timeout",
            paramLabel = "SECONDS",
            defaultValue = "0",
            description = "give up (exit 1) when the --count messages have not come within this many seconds; 0:"
                    + " wait for ever (default)")
    int timeoutSeconds;

    @Mixin
    PayloadLimit payload;

    @Mixin
    PulsarConnection connection;

    @Override
    int run(PrintWriter out, PrintWriter err) throws InterruptedException {
        try {
            if (count < 0 || !payload.valid() || timeoutSeconds < 0) {
                throw new PulsarConnection.Refused(
                        "--count and --timeout must be 0 or more and --max-bytes at least 1", Main.USAGE);
            }
            var settings = connection.settings();
            try (PulsarConnection.Released released = connection.open(settings);
                    Consumer<byte[]> consumer = released.client()
                            .newConsumer(Schema.BYTES)
                            .topic(topic)
                            .subscriptionName(subscription)
                            // Shared: the broker counts redeliveries there, so the attempt shown is the broker's.
                            .subscriptionType(SubscriptionType.Shared)
                            .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                            .subscribe()) {
                long deadline =
                        timeoutSeconds == 0 ? Long.MAX_VALUE : System.nanoTime() + timeoutSeconds * 1_000_000_000L;
                int received = 0;
                while (count == 0 || received < count) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        err.println("settle consume: " + received + " of " + count + " messages within "
                                + timeoutSeconds + " s on " + topic + " (subscription '" + subscription + "')");
                        return 1;
                    }
                    Message<byte[]> message =
                            consumer.receive((int) Math.min(left / 1_000_000, 1000), TimeUnit.MILLISECONDS);
                    if (message == null) {
                        continue;
                    }
                    received++;
                    print(out, received, message);
                    consumer.acknowledge(message);
                }
                return 0;
            }
        } catch (PulsarConnection.Refused refused) {
            err.println("settle consume: " + refused.getMessage());
            return refused.exitCode;
        } catch (PulsarClientException failed) {
            err.println("settle consume: " + topic + ": " + ConnectionProblems.describe(failed));
            return 1;
        } finally {
            out.flush();
            err.flush();
        }
    }

    private void print(PrintWriter out, int number, Message<byte[]> message) {
        Map<String, String> properties = new TreeMap<>(message.getProperties());
        out.println("----- message " + number + ": " + message.getMessageId() + ", attempt "
                + (message.getRedeliveryCount() + 1) + ", published " + Instant.ofEpochMilli(message.getPublishTime()));
        out.println("key: " + (message.hasKey() ? Printable.text(message.getKey()) : "(none)"));
        out.println("properties: "
                + (properties.isEmpty()
                        ? "(none)"
                        : properties.entrySet().stream()
                                .map(e -> Printable.text(e.getKey()) + "=" + Printable.text(e.getValue()))
                                .collect(Collectors.joining(", "))));
        out.println("payload (" + message.getData().length + " bytes): " + payload.show(message.getData()));
        out.flush();
    }
}
