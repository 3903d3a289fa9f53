package dev.settle.fidelity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.test.DeadLetterMessage;
import dev.settle.test.Delivered;
import dev.settle.test.Published;
import dev.settle.test.SettleTestDriver;
import dev.settle.test.TestMessage;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The test kit against the real broker: every {@link Scenarios scenario} runs once on {@link SettleTestDriver} and
 * once through {@code settle run} (the shaded runtime JAR as a child process, the same manifest and handler JAR)
 * against the embedded Pulsar broker. Per message they must give the same sequence of (action, attempt), the same
 * dead letters (payload, key, properties, the origin being the message the handler saw), and the same
 * {@code settle_outcomes_total}, {@code settle_deliveries_total} and {@code settle_dead_lettered_total}. When they
 * differ, the kit is wrong.
 */
class FidelityIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private static final Path RUNTIME_JAR = Path.of("..", "runtime", "target", "settle-runtime.jar")
            .toAbsolutePath()
            .normalize();
    private static final Pattern SAMPLE = Pattern.compile("^(settle_\\w+)\\{([^}]*)\\} (\\S+)$");
    private static final Pattern LABEL = Pattern.compile("(\\w+)=\"([^\"]*)\"");

    /** The child's output, kept for a look when a scenario differs. */
    private static final Path LOG = Path.of("target", "fidelity-settle-run.log").toAbsolutePath();

    @TempDir
    Path folder;

    /** What one run left behind for one scenario. */
    record Result(
            List<String> deliveries,
            List<String> outcomes,
            List<String> deadLetters,
            List<String> outputs,
            Map<String, Double> metrics) {}

    /** The driver's debug line for each settled delivery (SETTLE_LOG_LEVEL=DEBUG). */
    private static final Pattern SETTLED = Pattern.compile(
            ".* subscription '([^']+)': message (\\S+)(?: \\(key ([^)]*)\\))? attempt (\\d+)(?: of \\d+)?: (\\w+)$");

    /** One message's settled deliveries in the driver's log: its key and "attempt outcome" of each. */
    record Logged(String key, List<String> seen) {}

    @TestFactory
    Stream<DynamicTest> everyScenarioSettlesOnTheKitAsOnTheRealBroker() throws Exception {
        List<Scenario> scenarios = Scenarios.all();
        String run = "fidelity-" + System.currentTimeMillis();
        Path jar = FidelityJar.build(folder.resolve("scripted.jar"));
        Path manifest = manifest(scenarios, jar);

        Path kitRecords = Files.createDirectories(folder.resolve("kit"));
        long kitStarted = System.nanoTime();
        Map<String, Result> kit = runOnTheKit(manifest, scenarios, environment(run, kitRecords, 0));
        double kitSeconds = (System.nanoTime() - kitStarted) / 1e9;

        Path brokerRecords = Files.createDirectories(folder.resolve("broker"));
        long brokerStarted = System.nanoTime();
        Map<String, Result> broker = runOnTheBroker(manifest, scenarios, run, brokerRecords, kit);
        double brokerSeconds = (System.nanoTime() - brokerStarted) / 1e9;
        System.out.printf(
                "fidelity: %d scenarios on the test kit in %.2f s, through settle run against the broker in %.1f s%n",
                scenarios.size(), kitSeconds, brokerSeconds);

        return scenarios.stream()
                .map(scenario -> DynamicTest.dynamicTest(scenario.name(), () -> {
                    Result onKit = kit.get(scenario.name());
                    Result onBroker = broker.get(scenario.name());
                    assertThat(onKit.outcomes())
                            .as("the kit's settled deliveries")
                            .isNotEmpty();
                    assertThat(onKit.deliveries()).as("deliveries, per message").isEqualTo(onBroker.deliveries());
                    assertThat(onKit.outcomes())
                            .as("(attempt, outcome) as the runtime settled each, per message")
                            .isEqualTo(onBroker.outcomes());
                    assertThat(onKit.deadLetters()).as("dead letters").isEqualTo(onBroker.deadLetters());
                    if (scenario.publishesOnSuccess()) {
                        assertThat(onKit.outputs()).as("the kit's outputs").isNotEmpty();
                    }
                    assertThat(onKit.outputs())
                            .as("outputs: value, key, properties")
                            .isEqualTo(onBroker.outputs());
                    assertThat(onKit.metrics()).as("exported metrics").isEqualTo(onBroker.metrics());
                }));
    }

    private Map<String, String> environment(String run, Path records, int port) {
        return Map.of(
                "RUN", run,
                "RECORD_DIR", records.toString(),
                "PULSAR_URL", pulsar.endpoints().serviceUrl(),
                "HTTP_PORT", String.valueOf(port));
    }

    private Path manifest(List<Scenario> scenarios, Path jar) throws IOException {
        StringBuilder yaml = new StringBuilder("""
                pulsar:
                  serviceUrl: ${PULSAR_URL}
                http:
                  port: ${HTTP_PORT}
                  bindAddress: 127.0.0.1
                subscriptions:
                """);
        for (Scenario scenario : scenarios) {
            yaml.append("  - name: ").append(scenario.name()).append('\n');
            yaml.append("    topics: [\"persistent://public/default/${RUN}-")
                    .append(scenario.name())
                    .append("\"]\n");
            yaml.append("    jar: ").append(jar.getFileName()).append('\n');
            String sleep = "0";
            for (String line : scenario.settings()) {
                if (line.startsWith("SLEEP ")) {
                    sleep = line.substring("SLEEP ".length());
                } else if (!line.equals(Scenario.REFUSES_OUTPUT) && !line.equals(Scenario.PUBLISHES)) {
                    yaml.append("    ").append(line).append('\n');
                }
            }
            yaml.append("    config:\n");
            yaml.append("      record: ${RECORD_DIR}/").append(scenario.name()).append(".tsv\n");
            yaml.append("      sleepMillis: \"").append(sleep).append("\"\n");
        }
        return Files.writeString(jar.resolveSibling("fidelity.yaml"), yaml);
    }

    private Map<String, Result> runOnTheKit(Path manifest, List<Scenario> scenarios, Map<String, String> environment)
            throws Exception {
        try (SettleTestDriver settle = SettleTestDriver.fromManifest(manifest, environment)) {
            for (Scenario scenario : scenarios) {
                if (scenario.refusesOutput()) {
                    settle.failPublishesTo(outputTopic(environment.get("RUN"), scenario));
                }
                for (Scenario.Message message : scenario.messages()) {
                    TestMessage sent = settle.subscription(scenario.name()).message(message.payload());
                    if (message.key() != null) {
                        sent.key(message.key());
                    }
                    sent.properties(message.properties()).publish();
                }
            }
            settle.advance(Duration.ofMinutes(10));
            Map<String, Double> metrics = metrics(settle.metricsText());
            Map<String, Result> results = new LinkedHashMap<>();
            for (Scenario scenario : scenarios) {
                Path records = Path.of(environment.get("RECORD_DIR"));
                Map<String, String> origins = origins(records, scenario);
                List<Delivered> delivered = settle.subscription(scenario.name()).deliveries();
                // A message the handler never saw (its payload could not be decoded) is known by its key.
                delivered.forEach(
                        d -> origins.putIfAbsent(d.messageId(), "key " + d.key().orElse("-")));
                List<String> deadLetters = new ArrayList<>();
                for (DeadLetterMessage dead :
                        settle.subscription(scenario.name()).deadLetters()) {
                    deadLetters.add(deadLetter(dead.text(), dead.key().orElse("-"), dead.properties(), origins));
                }
                Map<String, List<String>> outcomes = new TreeMap<>();
                for (Delivered delivery : delivered) {
                    outcomes.computeIfAbsent(tag(origins, delivery.messageId()), tag -> new ArrayList<>())
                            .add(delivery.attempt() + " " + delivery.outcome().label());
                }
                List<String> outputs = new ArrayList<>();
                for (Published sent : settle.outputs(outputTopic(environment.get("RUN"), scenario))) {
                    outputs.add(output(sent.text(), sent.key().orElse("-"), sent.properties()));
                }
                results.put(
                        scenario.name(),
                        new Result(
                                deliveries(records, scenario),
                                perMessage(outcomes),
                                deadLetters,
                                outputs,
                                metricsOf(metrics, scenario.name())));
            }
            return results;
        }
    }

    private static String outputTopic(String run, Scenario scenario) {
        return "persistent://public/default/" + run + "-" + scenario.name() + "-out";
    }

    private static String output(String text, String key, Map<String, String> properties) {
        Map<String, String> shown = new TreeMap<>(properties);
        // The kit numbers its messages as a broker would, but not always as this one did: the id is compared by
        // being there (it is checked against the input itself in FunctionsIT and the kit's own tests).
        shown.computeIfPresent("__pfn_input_msg_id__", (name, id) -> id.isBlank() ? "blank" : "an input's id");
        return text + " key " + key + " " + shown;
    }

    private static String tag(Map<String, String> origins, String messageId) {
        return origins.getOrDefault(messageId, "unknown id " + messageId);
    }

    private static List<String> perMessage(Map<String, List<String>> byTag) {
        List<String> lines = new ArrayList<>();
        byTag.forEach((tag, seen) -> {
            // In attempt order: with concurrency, attempt 2 can be settled and logged on one thread before attempt 1's
            // line ("1 retry"), written after its negative acknowledgement on another, reaches the log.
            List<String> byAttempt = new ArrayList<>(seen);
            byAttempt.sort(
                    Comparator.comparingInt(settled -> Integer.parseInt(settled.substring(0, settled.indexOf(' ')))));
            lines.add(tag + ": " + String.join(", ", byAttempt));
        });
        return lines;
    }

    /** Per subscription, per message id: "attempt outcome" of each settled delivery, from the driver's log. */
    private static Map<String, Map<String, Logged>> settledInLog() throws IOException {
        Map<String, Map<String, Logged>> settled = new TreeMap<>();
        for (String line : Files.readAllLines(LOG)) {
            Matcher match = SETTLED.matcher(line);
            if (match.matches()) {
                String key = match.group(3) == null ? "-" : match.group(3);
                settled.computeIfAbsent(match.group(1), subscription -> new LinkedHashMap<>())
                        .computeIfAbsent(match.group(2), id -> new Logged(key, new ArrayList<>()))
                        .seen()
                        .add(match.group(4) + " " + match.group(5));
            }
        }
        return settled;
    }

    private Map<String, Result> runOnTheBroker(
            Path manifest, List<Scenario> scenarios, String run, Path records, Map<String, Result> expected)
            throws Exception {
        assertThat(RUNTIME_JAR)
                .as("the shaded runtime JAR (built by the runtime's package)")
                .exists();
        int port = SettleProcess.freePort();
        // The test runtimes' JVM options (a 256 MB heap, C1 only, the serial collector: see SettleProcess).
        List<String> command = new ArrayList<>(List.of("java"));
        command.addAll(SettleProcess.jvmOptions());
        command.addAll(List.of("-jar", RUNTIME_JAR.toString(), "run", manifest.toString()));
        ProcessBuilder builder =
                new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(LOG.toFile());
        builder.environment().putAll(environment(run, records, port));
        // The driver then logs how it settled each delivery: the per-message outcomes compared with the kit's.
        builder.environment().put("SETTLE_LOG_LEVEL", "DEBUG");
        PulsarClient client = pulsar.client();
        PulsarAdmin admin = pulsar.admin();
        for (Scenario scenario : scenarios) {
            if (scenario.refusesOutput()) {
                refuseEveryMessageOn(client, admin, outputTopic(run, scenario));
            }
            if (scenario.hasOutput()) {
                // A subscription from the start, so every output is kept until it is read.
                client.newConsumer()
                        .topic(outputTopic(run, scenario))
                        .subscriptionName(scenario.name() + "-out")
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                        .subscribe()
                        .close();
            }
        }
        return runSettle(builder, client, scenarios, run, records, port, expected);
    }

    /**
     * A topic policy the broker enforces on every publish: messages larger than one byte are refused (NotAllowed).
     * Waits until a probe send really fails.
     */
    private static void refuseEveryMessageOn(PulsarClient client, PulsarAdmin admin, String topic) throws Exception {
        admin.topics().createNonPartitionedTopic(topic);
        admin.topicPolicies().setMaxMessageSize(topic, 1);
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    try (Producer<byte[]> probe = client.newProducer()
                            .topic(topic)
                            .enableBatching(false)
                            .create()) {
                        probe.send("probe: is the policy in force yet?".getBytes(StandardCharsets.UTF_8));
                        return false;
                    } catch (Exception refused) {
                        return true;
                    }
                });
    }

    private Map<String, Result> runSettle(
            ProcessBuilder builder,
            PulsarClient client,
            List<Scenario> scenarios,
            String run,
            Path records,
            int port,
            Map<String, Result> expected)
            throws Exception {
        Process settle = builder.start();
        try {
            await().atMost(Duration.ofSeconds(120))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        assertThat(settle.isAlive())
                                .as("settle run is running (see settle-run.log)")
                                .isTrue();
                        return SettleProcess.status(port, "/readyz") == 200;
                    });
            for (Scenario scenario : scenarios) {
                try (Producer<byte[]> producer = client.newProducer()
                        .topic("persistent://public/default/" + run + "-" + scenario.name())
                        .enableBatching(false)
                        .create()) {
                    for (Scenario.Message message : scenario.messages()) {
                        TypedMessageBuilder<byte[]> sent = producer.newMessage().value(message.payload());
                        if (message.key() != null) {
                            sent.key(message.key());
                        }
                        sent.properties(message.properties()).send();
                    }
                }
            }
            // Until every scenario has done what it did on the kit (the failure names those that differ and how),
            // then a while longer for anything extra.
            Waits.until(
                    "every scenario's deliveries through settle run as on the kit",
                    Duration.ofSeconds(90),
                    () -> differing(scenarios, records, expected),
                    Map::isEmpty);
            Waits.pause(Duration.ofSeconds(3), "a while longer, for anything extra to show before it is compared");
            Map<String, Double> metrics = metrics(SettleProcess.body(port, "/metrics"));
            Map<String, Map<String, Logged>> settledInLog = settledInLog();
            Map<String, Result> results = new LinkedHashMap<>();
            for (Scenario scenario : scenarios) {
                Map<String, String> origins = origins(records, scenario);
                Map<String, Logged> logged = settledInLog.getOrDefault(scenario.name(), Map.of());
                logged.forEach((id, message) -> origins.putIfAbsent(id, "key " + message.key()));
                List<String> deadLetters = new ArrayList<>();
                if (scenario.hasDeadLetters()) {
                    try (Consumer<byte[]> consumer = client.newConsumer()
                            .topic("persistent://public/default/" + run + "-" + scenario.name() + "-dlq")
                            .subscriptionName(scenario.name() + "-dlq")
                            .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                            .subscribe()) {
                        for (Message<byte[]> dead = consumer.receive(1, TimeUnit.SECONDS);
                                dead != null;
                                dead = consumer.receive(1, TimeUnit.SECONDS)) {
                            deadLetters.add(deadLetter(
                                    new String(dead.getData(), StandardCharsets.UTF_8),
                                    dead.hasKey() ? dead.getKey() : "-",
                                    dead.getProperties(),
                                    origins));
                        }
                    }
                }
                List<String> outputs = new ArrayList<>();
                if (scenario.hasOutput()) {
                    try (Consumer<byte[]> consumer = client.newConsumer()
                            .topic(outputTopic(run, scenario))
                            .subscriptionName(scenario.name() + "-out")
                            .subscribe()) {
                        for (Message<byte[]> sent = consumer.receive(1, TimeUnit.SECONDS);
                                sent != null;
                                sent = consumer.receive(1, TimeUnit.SECONDS)) {
                            outputs.add(output(
                                    new String(sent.getData(), StandardCharsets.UTF_8),
                                    sent.hasKey() ? sent.getKey() : "-",
                                    sent.getProperties()));
                        }
                    }
                }
                Map<String, List<String>> outcomes = new TreeMap<>();
                logged.forEach((id, message) -> outcomes.computeIfAbsent(tag(origins, id), tag -> new ArrayList<>())
                        .addAll(message.seen()));
                results.put(
                        scenario.name(),
                        new Result(
                                deliveries(records, scenario),
                                perMessage(outcomes),
                                deadLetters,
                                outputs,
                                metricsOf(metrics, scenario.name())));
            }
            return results;
        } finally {
            settle.toHandle().destroy();
            if (!settle.waitFor(30, TimeUnit.SECONDS)) {
                settle.destroyForcibly();
            }
        }
    }

    /** The scenarios whose deliveries through settle run differ from the kit's so far, each with both. */
    private static Map<String, String> differing(List<Scenario> scenarios, Path records, Map<String, Result> expected)
            throws IOException {
        Map<String, String> differing = new TreeMap<>();
        for (Scenario scenario : scenarios) {
            List<String> run = deliveries(records, scenario);
            List<String> kit = expected.get(scenario.name()).deliveries();
            if (!run.equals(kit)) {
                differing.put(scenario.name(), "kit " + kit + ", settle run " + run);
            }
        }
        return differing;
    }

    /** Per message (by tag), in order: "attempt action key"; the message id is left out (each run has its own). */
    private static List<String> deliveries(Path records, Scenario scenario) throws IOException {
        Map<String, List<String>> byTag = new TreeMap<>();
        for (String[] line : lines(records, scenario)) {
            byTag.computeIfAbsent(line[1], tag -> new ArrayList<>()).add(line[2] + " " + line[3] + " " + line[5]);
        }
        List<String> deliveries = new ArrayList<>();
        byTag.forEach((tag, seen) -> deliveries.add(tag + ": " + String.join(", ", seen)));
        if (scenario.name().equals("key-order-with-concurrency")) {
            // The order each key's messages were handled in, which concurrency must not change.
            Map<String, List<String>> byKey = new TreeMap<>();
            for (String[] line : lines(records, scenario)) {
                byKey.computeIfAbsent(line[5], key -> new ArrayList<>()).add(line[1]);
            }
            byKey.forEach((key, tags) -> deliveries.add("key " + key + ": " + tags));
        }
        return deliveries;
    }

    /** Each tag's message id, as the handler saw it. */
    private static Map<String, String> origins(Path records, Scenario scenario) throws IOException {
        Map<String, String> origins = new LinkedHashMap<>();
        for (String[] line : lines(records, scenario)) {
            origins.put(line[4], line[1]);
        }
        return origins;
    }

    private static List<String[]> lines(Path records, Scenario scenario) throws IOException {
        Path file = records.resolve(scenario.name() + ".tsv");
        if (!Files.exists(file)) {
            return List.of();
        }
        return Files.readAllLines(file).stream().map(line -> line.split("\t")).toList();
    }

    /** A dead letter with its origin given as the tag of the message the handler saw under that id. */
    private static String deadLetter(
            String text, String key, Map<String, String> properties, Map<String, String> origins) {
        Map<String, String> shown = new TreeMap<>(properties);
        for (String name : List.of(DeadLetterMessage.ORIGIN_MESSAGE_ID, "ORIGIN_MESSAGE_IDY_TIME")) {
            shown.computeIfPresent(name, (n, id) -> "message " + origins.getOrDefault(id, "unknown id " + id));
        }
        // The topic's name carries the run's id: keep only what the scenario chose.
        shown.computeIfPresent(DeadLetterMessage.REAL_TOPIC, (name, topic) -> topic.replaceAll("fidelity-\\d+-", ""));
        // Settle's letters: times and the instance differ between runs, the stack's frames between the kit's threads
        // and the runtime's, and an exception's message names message ids (and, for an output, the simulated or the
        // real broker's refusal); the rest (stage, exception class, attempts, subscription, code) must match.
        // The kit runs no live code, so its code has no generation: the class that failed must match.
        shown.computeIfPresent("settle.code", (n, code) -> code.replaceFirst(" \\(generation .*\\)$", ""));
        for (String name : List.of(
                "settle.first.attempt.time",
                "settle.last.attempt.time",
                "settle.instance",
                "settle.exception.message",
                "settle.exception.stacktrace")) {
            shown.computeIfPresent(name, (n, value) -> "(present)");
        }
        return text + " key " + key + " " + shown;
    }

    /** settle_* samples of the Prometheus text, by "name{labels}" with the labels sorted. */
    private static Map<String, Double> metrics(String text) {
        Map<String, Double> samples = new TreeMap<>();
        for (String line : text.split("\n")) {
            Matcher sample = SAMPLE.matcher(line);
            if (!sample.matches()) {
                continue;
            }
            Map<String, String> labels = new TreeMap<>();
            Matcher label = LABEL.matcher(sample.group(2));
            while (label.find()) {
                labels.put(label.group(1), label.group(2));
            }
            samples.put(sample.group(1) + labels, Double.parseDouble(sample.group(3)));
        }
        return samples;
    }

    /** The counters whose values a scenario fixes: outcomes, deliveries, dead letters. */
    private static Map<String, Double> metricsOf(Map<String, Double> all, String subscription) {
        Map<String, Double> chosen = new TreeMap<>();
        all.forEach((name, value) -> {
            boolean counter = name.startsWith("settle_outcomes_total")
                    || name.startsWith("settle_deliveries_total")
                    || name.startsWith("settle_dead_lettered_total");
            boolean ofSubscription = name.contains("subscription=" + subscription + ",")
                    || name.contains("subscription=" + subscription + "}");
            if (counter && ofSubscription) {
                chosen.put(name, value);
            }
        });
        return chosen;
    }
}
