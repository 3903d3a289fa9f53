package dev.settle.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.benchmarks.handlers.IdentityFunction;
import dev.settle.benchmarks.handlers.Payload;
import dev.settle.testbroker.LocalRunnerProcess;
import dev.settle.testbroker.PulsarBroker;
import dev.settle.testbroker.PulsarEndpoints;
import dev.settle.testbroker.TestJvm;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Pulsar Functions' LocalRunner 4.0.7, started by {@link LocalRunnerProcess} in a JVM of its own, runs the benchmark's
 * identity function against the embedded 4.2.4 broker: every input of a backlog published before it started comes
 * out once on the output topic, the function's own stdout reaches us, and once stopped it has acknowledged them all.
 */
// The shared broker without PulsarFixture: this module has no Pulsar admin client (the backlog is read over HTTP).
@ExtendWith(PulsarBroker.class)
class LocalRunnerProcessIT {
    private static final int INPUTS = 200;

    @Test
    void runsTheIdentityFunctionOnABacklogAndAcknowledgesEveryInputOnceItsOutputIsStored(PulsarEndpoints pulsar)
            throws Exception {
        String suffix = Long.toString(System.nanoTime());
        String input = "persistent://public/default/local-runner-in-" + suffix;
        String output = "persistent://public/default/local-runner-out-" + suffix;
        LocalRunnerProcess.Function function = new LocalRunnerProcess.Function(
                Workspace.locate().handlerJar(),
                IdentityFunction.class.getName(),
                List.of(input),
                output,
                "local-runner-identity",
                Map.of("count", Integer.toString(INPUTS)));

        try (PulsarClient client =
                        PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).build();
                Consumer<byte[]> outputs = client.newConsumer(Schema.BYTES)
                        .topic(output)
                        .subscriptionName("check")
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                        .subscribe()) {
            Backlog.produce(client, input, INPUTS, false);

            try (LocalRunnerProcess runner =
                    // The test JVMs' speed options (test-broker/test-jvm.args): checked is what it does, not its speed.
                    LocalRunnerProcess.start(
                            pulsar, function, List.of("-Xmx256m", TestJvm.speedOptions()), "local-runner")) {
                runner.awaitSubscribed(Duration.ofSeconds(60));

                List<Integer> received = new ArrayList<>();
                for (Message<byte[]> message = outputs.receive(30, TimeUnit.SECONDS);
                        message != null;
                        message = outputs.receive(received.size() < INPUTS ? 30 : 2, TimeUnit.SECONDS)) {
                    received.add(Payload.index(message.getValue()));
                    outputs.acknowledge(message);
                }
                assertThat(received)
                        .as("the outputs, in the order the one LocalRunner instance sent them")
                        .containsExactlyElementsOf(
                                IntStream.range(0, INPUTS).boxed().toList());
                assertThat(runner.output)
                        .as("the function's own stdout: the harness reads its markers there")
                        .anyMatch(line -> line.startsWith("BENCH first "))
                        .anyMatch(line -> line.startsWith("BENCH last "));

                assertThat(runner.stop())
                        .as("LocalRunner exits on SIGTERM within 30 s")
                        .isTrue();
                assertThat(backlog(pulsar, input, function.subscription()))
                        .as("inputs left unacknowledged on " + function.subscription())
                        .isZero();
            }
        }
    }

    /** The subscription's backlog, from the broker's admin API. */
    private static long backlog(PulsarEndpoints pulsar, String topic, String subscription) throws Exception {
        String stats = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(pulsar.adminUrl() + "/admin/v2/"
                                        + topic.replace("persistent://", "persistent/") + "/stats"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        Matcher matcher = Pattern.compile("\"" + subscription + "\":\\{.*?\"msgBacklog\":(\\d+)")
                .matcher(stats);
        assertThat(matcher.find())
                .as("subscription %s in %s", subscription, stats)
                .isTrue();
        return Long.parseLong(matcher.group(1));
    }
}
