package dev.settle.runtime.function;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.testbroker.LocalRunnerProcess;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.TestJvm;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Thirteen functions written as public Function repositories write them ({@link ComparisonFunctions}), each run by
 * Settle (in the test's JVM, {@code Settle.start}) and under Pulsar Functions' LocalRunner 4.0.7 (each in a
 * LocalRunner of its own, all in a JVM of their own: {@link LocalRunnerProcess#startAll}) on the same input topic, each
 * runner with a subscription and an output topic of its own: the outputs' values, keys and properties must be the
 * same.
 *
 * <p>Compared as they are, in order, except where the runners differ by design: a time window's grouping depends on
 * when each runner received each message, so its outputs are compared by the words they hold; an output's
 * {@code __pfn_input_msg_id__} names the same input message under both, but only its presence is compared (the bytes
 * of a message id depend on how the consumer received it, batched or not); the event time is not compared (Settle
 * carries the input's, LocalRunner does not, and these inputs have none). State under LocalRunner lives in its own
 * JVM's metadata store (PulsarMetadataStateStoreProviderImpl on {@code memory:}), Settle's in a compacted topic.
 */
// A LocalRunner JVM with thirteen functions (some 20 s alone, more under load): run with -Preliability (.ci/run), not
// in a plain ./mvnw verify.
@Tag("reliability")
class FunctionsComparisonIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private static final String INPUT_MESSAGE_ID = FunctionPort.INPUT_MESSAGE_ID;
    /** The package of the order SerDes ({@link FunctionJars#orderSerDes}). */
    private static final String SERDE = "com.example.serde.";

    /**
     * The LocalRunner JVM's options: much of this test is its start, and it is the reference, not what is measured: the
     * test JVMs' speed options (test-broker/test-jvm.args: C1 only, no bytecode verification; a LocalRunner was
     * subscribed after 4.1-4.6 s of CPU without verification against 4.9 s) and one GC thread spend less CPU starting
     * it on the cores the rest of the build shares; a heap for thirteen functions and their clients.
     */
    private static final List<String> LOCAL_RUNNER_JVM =
            List.of("-Xmx384m", TestJvm.speedOptions(), "-XX:+UseSerialGC");

    @TempDir
    Path folder;

    /** One function of the suite: what it is, its input, and how it is configured under both runners. */
    private record Case(
            String name,
            String jar,
            String className,
            List<Input> inputs,
            int outputs,
            String settle,
            Map<String, Object> localRunner,
            List<String> localRunnerArguments,
            boolean byWords) {
        Case(String name, String jar, String className, List<Input> inputs, int outputs) {
            this(name, jar, className, inputs, outputs, "", Map.of(), List.of(), false);
        }

        Case with(String settleLines, Map<String, Object> config) {
            return new Case(name, jar, className, inputs, outputs, settleLines, config, localRunnerArguments, byWords);
        }
    }

    private record Input(String key, byte[] value, Map<String, String> properties) {
        static Input of(String key, String value, Map<String, String> properties) {
            return new Input(key, value.getBytes(StandardCharsets.UTF_8), properties);
        }
    }

    /** One output as compared: its key, its value (as text, or base64 when it is not UTF-8 text), its properties. */
    private record Output(String key, String value, Map<String, String> properties) {}

    private static List<Input> sentences() {
        return List.of(
                Input.of("k1", "hello world", Map.of("source", "web", "tier", "vip")),
                Input.of("k2", "pulsar functions", Map.of("source", "app")),
                Input.of(null, "no key here", Map.of()),
                Input.of("k1", "settle runs them", Map.of("tier", "standard")),
                Input.of("k3", "the same", Map.of("a", "1", "b", "2")));
    }

    private static List<Input> numbers(int count) {
        List<Input> inputs = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            inputs.add(Input.of("n" + i, Integer.toString(i), Map.of()));
        }
        return inputs;
    }

    private static List<Input> words(String... words) {
        List<Input> inputs = new ArrayList<>();
        for (String word : words) {
            inputs.add(Input.of(null, word, Map.of()));
        }
        return inputs;
    }

    private static List<Input> orders() {
        List<Input> inputs = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            String json = "{\"id\":\"o-" + i + "\",\"quantity\":" + i + ",\"price\":" + (i * 2.5) + "}";
            inputs.add(Input.of("order-" + i, json, Map.of("channel", "shop")));
        }
        return inputs;
    }

    private static List<Case> suite() {
        String s = ComparisonFunctions.STARTER;
        String o = ComparisonFunctions.ORDERS;
        return List.of(
                new Case("exclaim", "starter.jar", s + "ExclamationFunction", sentences(), 5),
                new Case("greet", "starter.jar", s + "GreetingFunction", sentences(), 5)
                        .with("config: {greeting: Bonjour}", Map.of("userConfig", Map.of("greeting", "Bonjour"))),
                new Case("log", "starter.jar", s + "LoggingFunction", sentences(), 5),
                new Case("record", "starter.jar", s + "RecordEchoFunction", sentences(), 5),
                new Case("route", "starter.jar", s + "PriorityRouter", sentences(), 5),
                new Case("reverse", "starter.jar", s + "ReverseFunction", sentences(), 5),
                new Case(
                        "count",
                        "starter.jar",
                        s + "WordCountFunction",
                        words("a", "b", "a", "c", "a", "b"),
                        6,
                        "state: true",
                        Map.of(),
                        List.of(
                                "--stateStorageImplClass",
                                "org.apache.pulsar.functions.instance.state.PulsarMetadataStateStoreProviderImpl",
                                "--stateStorageServiceUrl",
                                "memory:local-runner-state"),
                        false),
                new Case("split", "starter.jar", s + "SplitterFunction", sentences(), 12),
                new Case("sum", "starter.jar", s + "SumWindowFunction", numbers(10), 3)
                        .with(
                                "windowConfig: {windowLengthCount: 3}",
                                Map.of("windowConfig", Map.of("windowLengthCount", 3))),
                new Case(
                        "join",
                        "starter.jar",
                        s + "JoinWordsFunction",
                        words("one", "two", "three", "four", "five"),
                        1,
                        "windowConfig: {windowLengthDurationMs: 1000}",
                        Map.of("windowConfig", Map.of("windowLengthDurationMs", 1000)),
                        List.of(),
                        true),
                new Case("summary", "orders-fat.jar", o + "OrderSummaryFunction", orders(), 4)
                        .with(
                                "inputSerdes: {%INPUT%: " + SERDE + "JacksonOrderSerDe}\noutputSerde: " + SERDE
                                        + "KryoStringSerDe",
                                Map.of(
                                        "customSerdeInputs",
                                        Map.of("%INPUT%", SERDE + "JacksonOrderSerDe"),
                                        "outputSerdeClassName",
                                        SERDE + "KryoStringSerDe")),
                new Case("copy", "orders-fat.jar", o + "PropertyCopier", sentences(), 5),
                new Case("upper", "orders-fat.jar", o + "UpperCaseFunction", sentences(), 5));
    }

    @Test
    void everyFunctionGivesTheSameOutputsKeysAndPropertiesUnderSettleAsUnderLocalRunner() throws Exception {
        ComparisonFunctions.starter(folder);
        ComparisonFunctions.fat(folder);
        List<Case> suite = suite();
        assertThat(suite).hasSizeGreaterThanOrEqualTo(12);
        String run = Long.toString(System.nanoTime());
        Map<String, String> inputs = new LinkedHashMap<>();
        for (Case c : suite) {
            inputs.put(c.name(), "persistent://public/default/compare-" + c.name() + "-" + run);
        }

        PulsarClient client = pulsar.client();
        for (Case c : suite) {
            publish(client, inputs.get(c.name()), c.inputs(), c.settle().contains("inputSerdes"));
        }
        // Side by side: Settle in this JVM, LocalRunner in JVMs of its own, each on subscriptions and outputs of its
        // own; most of either is waiting (for JVMs to start, for outputs to stop coming).
        ExecutorService settleRun = Executors.newSingleThreadExecutor();
        Map<String, List<Output>> underSettle;
        Map<String, List<Output>> underLocalRunner;
        try {
            Future<Map<String, List<Output>>> settling = settleRun.submit(() -> runSettle(client, suite, inputs));
            underLocalRunner = runLocalRunner(client, suite, inputs);
            underSettle = settling.get(5, TimeUnit.MINUTES);
        } finally {
            settleRun.shutdownNow();
        }

        for (Case c : suite) {
            List<Output> settle = underSettle.get(c.name());
            List<Output> local = underLocalRunner.get(c.name());
            if (c.byWords()) {
                assertThat(words(settle))
                        .as(c.name())
                        .isEqualTo(words(local))
                        .hasSize(c.inputs().size());
                continue;
            }
            assertThat(settle).as(c.name() + " under Settle").hasSize(c.outputs());
            assertThat(settle)
                    .as(c.name() + ": Settle's outputs, LocalRunner's")
                    .isEqualTo(local);
        }
    }

    /**
     * Publishes the inputs, as STRING unless the function reads bytes (SerDes): a topic's schema is set by its first
     * producer, and LocalRunner's consumer may not change it.
     */
    private static void publish(PulsarClient client, String topic, List<Input> inputs, boolean bytes) throws Exception {
        Schema<byte[]> schema = bytes ? Schema.BYTES : Schema.AUTO_PRODUCE_BYTES(Schema.STRING);
        try (Producer<byte[]> producer =
                client.newProducer(schema).topic(topic).enableBatching(false).create()) {
            for (Input input : inputs) {
                var message = producer.newMessage().value(input.value()).properties(input.properties());
                if (input.key() != null) {
                    message.key(input.key());
                }
                message.send();
            }
        }
    }

    private Map<String, List<Output>> runSettle(PulsarClient client, List<Case> suite, Map<String, String> inputs)
            throws Exception {
        StringBuilder subscriptions = new StringBuilder();
        for (Case c : suite) {
            String input = inputs.get(c.name());
            subscriptions.append("""
                      - name: settle-%s
                        topics: [%s]
                        function: %s
                        jar: %s
                        output: %s
                    """.formatted(c.name(), input, c.className(), c.jar(), input + "-settle"));
            if (!c.settle().isEmpty()) {
                subscriptions.append(c.settle().replace("%INPUT%", input).indent(4));
            }
        }
        Path file = folder.resolve("compare.yaml");
        Files.writeString(file, """
                pulsar:
                  serviceUrl: %s
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                subscriptions:
                %s""".formatted(pulsar.endpoints().serviceUrl(), subscriptions));
        try (Deployment deployment = Preflight.check(file, Map.of());
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            return readAll(client, suite, c -> inputs.get(c.name()) + "-settle");
        }
    }

    /**
     * Each function under a LocalRunner of its own, all in one JVM ({@link LocalRunnerProcess#startAll}): a JVM each
     * spent 4-5 s of CPU starting, thirteen times, for functions that then handle a few messages.
     */
    private Map<String, List<Output>> runLocalRunner(PulsarClient client, List<Case> suite, Map<String, String> inputs)
            throws Exception {
        List<LocalRunnerProcess.Function> functions = new ArrayList<>();
        for (Case c : suite) {
            String input = inputs.get(c.name());
            Map<String, Object> config = new LinkedHashMap<>();
            Map<String, String> userConfig = Map.of();
            for (var entry : c.localRunner().entrySet()) {
                if (entry.getKey().equals("userConfig")) {
                    @SuppressWarnings("unchecked")
                    Map<String, String> given = (Map<String, String>) entry.getValue();
                    userConfig = given;
                } else {
                    config.put(entry.getKey(), withInput(entry.getValue(), input));
                }
            }
            functions.add(new LocalRunnerProcess.Function(
                    folder.resolve(c.jar()),
                    c.className(),
                    List.of(input),
                    input + "-lr",
                    "lr-" + c.name(),
                    userConfig,
                    config,
                    c.localRunnerArguments()));
        }
        long started = System.nanoTime();
        try (LocalRunnerProcess runners =
                LocalRunnerProcess.startAll(pulsar.endpoints(), functions, LOCAL_RUNNER_JVM, "lr")) {
            runners.awaitSubscribed(Duration.ofSeconds(120));
            long subscribed = System.nanoTime();
            Map<String, List<Output>> outputs = readAll(client, suite, c -> inputs.get(c.name()) + "-lr");
            System.out.printf(
                    "comparison: %d functions under LocalRunner subscribed in %.1f s, outputs read in %.1f s%n",
                    functions.size(), (subscribed - started) / 1e9, (System.nanoTime() - subscribed) / 1e9);
            return outputs;
        }
    }

    private static Object withInput(Object value, String input) {
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> replaced = new LinkedHashMap<>();
            map.forEach((key, inner) -> replaced.put(key.toString().replace("%INPUT%", input), inner));
            return replaced;
        }
        return value;
    }

    /**
     * The outputs of each case, in the suite's order, read from {@code output}'s topic all at once: each read ends with
     * 2 s in which nothing more came, and one after another those made half a minute of the test.
     */
    private static Map<String, List<Output>> readAll(
            PulsarClient client, List<Case> cases, java.util.function.Function<Case, String> output) throws Exception {
        ExecutorService readers = Executors.newFixedThreadPool(cases.size());
        try {
            Map<String, Future<List<Output>>> reading = new LinkedHashMap<>();
            for (Case c : cases) {
                reading.put(c.name(), readers.submit(() -> read(client, output.apply(c), c.outputs())));
            }
            Map<String, List<Output>> outputs = new LinkedHashMap<>();
            for (var entry : reading.entrySet()) {
                outputs.put(entry.getKey(), entry.getValue().get(2, TimeUnit.MINUTES));
            }
            return outputs;
        } finally {
            readers.shutdownNow();
        }
    }

    /** The outputs of {@code topic} from its start: waits up to 60 s for {@code expected}, then 2 s for more. */
    private static List<Output> read(PulsarClient client, String topic, int expected) throws Exception {
        List<Output> outputs = new ArrayList<>();
        try (Consumer<byte[]> reader = client.newConsumer(Schema.BYTES)
                .topic(topic)
                .subscriptionName("compare")
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                Message<byte[]> message = reader.receive(outputs.size() < expected ? 500 : 2000, TimeUnit.MILLISECONDS);
                if (message == null) {
                    if (outputs.size() >= expected) {
                        break;
                    }
                    continue;
                }
                outputs.add(new Output(
                        message.hasKey() ? message.getKey() : null,
                        text(message.getValue()),
                        comparable(message.getProperties())));
            }
        }
        return outputs;
    }

    /** The properties as compared: {@code __pfn_input_msg_id__} by its presence (see the class). */
    private static Map<String, String> comparable(Map<String, String> properties) {
        Map<String, String> compared = new TreeMap<>(properties);
        compared.computeIfPresent(INPUT_MESSAGE_ID, (key, id) -> "(present)");
        return compared;
    }

    private static String text(byte[] value) {
        String text = new String(value, StandardCharsets.UTF_8);
        boolean printable = text.chars().allMatch(c -> c >= 0x20 && c != 0xFFFD);
        return printable ? text : "base64:" + Base64.getEncoder().encodeToString(value);
    }

    private static List<String> words(List<Output> outputs) {
        return outputs.stream()
                .flatMap(output -> List.of(output.value().split(" ")).stream())
                .sorted()
                .collect(Collectors.toList());
    }
}
