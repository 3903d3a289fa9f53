package dev.settle.runtime.function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.observe.Exposition;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.Waits;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Unmodified Pulsar Functions, each from its own JAR, run by Settle on a real broker: outputs carry the input's key
 * and properties, the input is acknowledged only once every output is durable.
 *
 * <p>The tests run side by side: each starts a runtime of its own on topics of its own, from a folder of its own.
 */
@Execution(ExecutionMode.CONCURRENT)
class FunctionsIT {
    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    static String topic(String name) {
        return "persistent://public/default/" + name + "-" + System.nanoTime();
    }

    /** Starts Settle with one subscription {@code name}, the YAML lines given indented under it. */
    private Settle start(String name, String topic, String settings) throws Exception {
        Path file = folder.resolve(name + ".yaml");
        pulsar.manifest(
                file, """
                subscriptions:
                  - name: %s
                    topics: [%s]
                %s
                """.formatted(name, topic, settings.strip().indent(4).stripTrailing()));
        Deployment deployment = Preflight.check(file, Map.of("API_KEY", "k-123"));
        pulsar.closeAfterTest(deployment);
        Settle settle = pulsar.closeAfterTest(Settle.start(deployment, Duration.ofSeconds(5)));
        return settle;
    }

    private void send(String topic, String value, String key, Map<String, String> properties) throws Exception {
        try (Producer<String> producer = pulsar.client()
                .newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            var message = producer.newMessage().value(value).properties(properties);
            if (key != null) {
                message.key(key);
            }
            message.send();
        }
    }

    /** Every message of {@code topic} from the start; waits for {@code expected}, then half a second for extras. */
    private List<Message<String>> read(String topic, int expected, Duration within) throws Exception {
        List<Message<String>> messages = new ArrayList<>();
        try (Consumer<String> reader = pulsar.client()
                .newConsumer(Schema.STRING)
                .topic(topic)
                .subscriptionName("reader-" + System.nanoTime())
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            long deadline = System.nanoTime() + within.toNanos();
            while (messages.size() < expected && System.nanoTime() < deadline) {
                Message<String> message = reader.receive(200, TimeUnit.MILLISECONDS);
                if (message != null) {
                    messages.add(message);
                }
            }
            Message<String> extra = reader.receive(500, TimeUnit.MILLISECONDS);
            if (extra != null) {
                messages.add(extra);
            }
        }
        return messages;
    }

    private long backlog(String topic, String subscription) throws Exception {
        var stats = pulsar.admin().topics().getStats(topic).getSubscriptions().get(subscription);
        return stats == null ? -1 : stats.getMsgBacklog();
    }

    private static List<String> values(List<Message<String>> messages) {
        return messages.stream().map(Message::getValue).sorted().collect(Collectors.toList());
    }

    private static double metric(Settle settle, String sample) {
        Double value = Exposition.of(settle.metrics().registry()).value(sample);
        return value == null ? 0 : value;
    }

    /**
     * Custom SerDes from the function's own folder of JARs (Jackson in, Kryo out), neither library on the runtime's
     * class path.
     */
    @Test
    void customSerDesFromTheFunctionsJarDecodeInputsAndEncodeOutputs() throws Exception {
        Path functions = FunctionJars.serdes(folder);
        String input = topic("orders");
        String output = input + "-summaries";
        String settings = """
                function: com.example.serde.OrderSummary
                jar: serdes
                inputSerdes: {%s: com.example.serde.JacksonOrderSerDe}
                output: %s
                outputSerde: com.example.serde.KryoStringSerDe
                """.formatted(input, output);
        assertThatThrownBy(() -> Class.forName("com.esotericsoftware.kryo.Kryo"))
                .as("Kryo is the function's library, not the runtime's")
                .isInstanceOf(ClassNotFoundException.class);
        start("summaries", input, settings);
        try (Producer<byte[]> producer =
                pulsar.client().newProducer(Schema.BYTES).topic(input).create()) {
            producer.newMessage()
                    .key("o-1")
                    .value("{\"id\":\"o-1\",\"quantity\":3,\"price\":2.5}".getBytes(StandardCharsets.UTF_8))
                    .send();
        }

        List<String> summaries = new ArrayList<>();
        try (URLClassLoader libs =
                        new URLClassLoader(jarsOf(functions), getClass().getClassLoader());
                Consumer<byte[]> reader = pulsar.client()
                        .newConsumer(Schema.BYTES)
                        .topic(output)
                        .subscriptionName("reader")
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                        .subscribe()) {
            Object kryo = libs.loadClass("com.example.serde.KryoStringSerDe")
                    .getConstructor()
                    .newInstance();
            Message<byte[]> message = reader.receive(30, TimeUnit.SECONDS);
            assertThat(message).isNotNull();
            summaries.add((String)
                    kryo.getClass().getMethod("deserialize", byte[].class).invoke(kryo, (Object) message.getValue()));
            assertThat(message.getKey()).isEqualTo("o-1");
        }
        assertThat(summaries).containsExactly("o-1 costs 7.5");
    }

    /** Under Pulsar Functions the output topic has the function's schema once it runs, before any output. */
    @Test
    void theOutputTopicCarriesTheFunctionsSchemaBeforeAnyOutput() throws Exception {
        FunctionJars.wordCount(folder);
        String input = topic("quiet");
        String output = input + "-counts";
        start("quiet", input, """
                function: com.example.wordcount.WordCountFunction
                jar: word-count.jar
                output: %s
                """.formatted(output));

        // The producer is created as the subscription starts, in the background (it keeps it unready until then).
        org.awaitility.Awaitility.await()
                .atMost(java.time.Duration.ofSeconds(30))
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(
                                pulsar.admin().schemas().getSchemaInfo(output).getType())
                        .isEqualTo(org.apache.pulsar.common.schema.SchemaType.STRING));
        assertThat(pulsar.admin().topics().getStats(output).getMsgInCounter()).isZero();
    }

    /**
     * A tumbling count window: each input is acknowledged once the window holding it is stored; a stop lets go of
     * the open window at once (not after the grace), its inputs stay unacknowledged and fill the first window after
     * the restart, so none is lost.
     */
    @Test
    void aCountWindowIsPublishedEveryThreeInputsAndAStopLosesNoneOfAnOpenWindow() throws Exception {
        FunctionJars.windows(folder);
        String input = topic("sums");
        String output = input + "-out";
        String settings = """
                function: com.example.windows.SumWindow
                jar: windows.jar
                output: %s
                windowConfig: {windowLengthCount: 3}
                """.formatted(output);
        Settle first = start("sums", input, settings);
        for (int i = 1; i <= 7; i++) {
            send(input, String.valueOf(i), "k" + i, Map.of("p", "v"));
        }
        List<Message<String>> published = read(output, 2, Duration.ofSeconds(30));
        assertThat(published).extracting(Message::getValue).containsExactly("sum=6 of 3", "sum=15 of 3");
        // As Functions' context.publish: a window's output is no one input's, so it has no key and no properties.
        assertThat(published).allSatisfy(message -> {
            assertThat(message.hasKey()).isFalse();
            assertThat(message.getProperties()).isEmpty();
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "sums") == 1);

        long stopping = System.nanoTime();
        first.close();
        // The grace is 5 s: the open window does not hold the stop for it.
        assertThat(Duration.ofNanos(System.nanoTime() - stopping)).isLessThan(Duration.ofSeconds(4));
        assertThat(backlog(input, "sums")).isEqualTo(1);

        start("sums", input, settings);
        send(input, "8", null, Map.of());
        send(input, "9", null, Map.of());

        assertThat(read(output, 3, Duration.ofSeconds(30)))
                .extracting(Message::getValue)
                .containsExactly("sum=6 of 3", "sum=15 of 3", "sum=24 of 3");
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "sums") == 0);
    }

    /** A sliding count window of the last 4 inputs every 2, as Functions' CountEvictionPolicy cuts it. */
    @Test
    void aSlidingCountWindowHoldsTheLastFourInputsEveryTwo() throws Exception {
        FunctionJars.windows(folder);
        String input = topic("sliding");
        String output = input + "-out";
        start("sliding", input, """
                function: com.example.windows.SumWindow
                jar: windows.jar
                output: %s
                windowConfig: {windowLengthCount: 4, slidingIntervalCount: 2}
                """.formatted(output));
        for (int i = 1; i <= 6; i++) {
            send(input, String.valueOf(i), null, Map.of());
        }

        assertThat(read(output, 3, Duration.ofSeconds(30)))
                .extracting(Message::getValue)
                .containsExactly("sum=3 of 2", "sum=10 of 4", "sum=18 of 4");
        // 5 and 6 are in the next window too: they wait for it.
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "sliding") == 2);
    }

    /**
     * A tumbling time window over a {@code java.util.function.Function<Collection<String>, String>}: every word is in
     * exactly one window's output, and every input is acknowledged.
     */
    @Test
    void aTimeWindowJoinsWhatArrivedInEachSecondAndAcknowledgesEveryInput() throws Exception {
        FunctionJars.windows(folder);
        String input = topic("joined");
        String output = input + "-out";
        start("joined", input, """
                function: com.example.windows.JoinWords
                jar: windows.jar
                output: %s
                windowConfig: {windowLengthDurationMs: 1000}
                """.formatted(output));
        List<String> words = List.of("alpha", "beta", "gamma", "delta", "epsilon");
        for (String word : words) {
            send(input, word, null, Map.of());
        }

        await().atMost(Duration.ofSeconds(30)).until(() -> backlog(input, "joined") == 0);
        // Read until every word is in: under load the five sends can span two or three windows (one output each;
        // reading a single output lost 'epsilon' once, its window the third).
        List<String> joined = new ArrayList<>();
        List<Message<String>> outputs = new ArrayList<>();
        try (Consumer<String> reader = pulsar.client()
                .newConsumer(Schema.STRING)
                .topic(output)
                .subscriptionName(PulsarFixture.unique("reader"))
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            Waits.until(
                    "every word in a window's output",
                    Duration.ofSeconds(10),
                    () -> {
                        Message<String> message = reader.receive(200, TimeUnit.MILLISECONDS);
                        if (message != null) {
                            outputs.add(message);
                            joined.addAll(List.of(message.getValue().split(" ")));
                        }
                        return joined;
                    },
                    soFar -> soFar.size() >= words.size());
            // Anything more (a word twice) comes within a moment.
            Message<String> extra = reader.receive(500, TimeUnit.MILLISECONDS);
            if (extra != null) {
                joined.addAll(List.of(extra.getValue().split(" ")));
            }
        }
        System.out.printf("time window: %d words in %d outputs%n", words.size(), outputs.size());
        assertThat(joined).containsExactlyElementsOf(words);
    }

    /**
     * {@code context.fatal} stops the runtime as its own fatal path does (so that it is restarted), and the message
     * that led to it is not acknowledged.
     */
    @Test
    void contextFatalStopsTheRuntimeAndLeavesTheMessageUnacknowledged() throws Exception {
        FunctionJars.fatal(folder);
        String input = topic("doomed");
        Settle settle = start("doomed", input, """
                function: com.example.fatal.GiveUp
                jar: give-up.jar
                """);
        send(input, "hopeless", null, Map.of());

        Settle.FatalError fatal = settle.fatalError().get(30, TimeUnit.SECONDS);

        assertThat(fatal.subscription()).isEqualTo("doomed");
        assertThat(fatal.error())
                .isInstanceOf(FunctionFatalError.class)
                .hasMessageContaining("com.example.fatal.GiveUp called context.fatal")
                .hasRootCauseMessage("cannot go on with hopeless");
        assertThat(metric(settle, "settle_outcomes_total{subscription=\"doomed\",outcome=\"ack\"}"))
                .isZero();
        settle.close();
        assertThat(backlog(input, "doomed")).isEqualTo(1);
    }

    /**
     * {@code state: true} keeps counters in a compacted topic: read back when the subscription starts again, so a
     * count goes on where it stopped.
     */
    @Test
    void stateIsKeptInItsTopicAndReadBackWhenTheSubscriptionStartsAgain() throws Exception {
        FunctionJars.wordCounter(folder);
        String input = topic("words");
        String output = input + "-counts";
        String settings = """
                function: com.example.state.WordCounter
                jar: counter.jar
                output: %s
                state: true
                """.formatted(output);
        Settle first = start("counter", input, settings);
        send(input, "a", null, Map.of());
        send(input, "b", null, Map.of());
        send(input, "a", null, Map.of());
        assertThat(read(output, 3, Duration.ofSeconds(30)))
                .extracting(Message::getValue)
                .containsExactly("a=1", "b=1", "a=2");
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "counter") == 0);
        first.close();

        start("counter", input, settings);
        send(input, "a", null, Map.of());

        assertThat(read(output, 4, Duration.ofSeconds(30)))
                .extracting(Message::getValue)
                .containsExactly("a=1", "b=1", "a=2", "a=3");
        Map<String, Long> stored = new java.util.HashMap<>();
        try (var table = pulsar.client()
                .newTableView(Schema.BYTES)
                .topic("persistent://public/default/counter-state")
                .create()) {
            table.forEach((key, value) ->
                    stored.put(key, java.nio.ByteBuffer.wrap(value).getLong()));
        }
        assertThat(stored).containsExactlyInAnyOrderEntriesOf(Map.of("a", 3L, "b", 1L));
    }

    private static java.net.URL[] jarsOf(Path folder) throws Exception {
        try (var files = Files.list(folder)) {
            List<java.net.URL> urls = new ArrayList<>();
            for (Path file : files.toList()) {
                urls.add(file.toUri().toURL());
            }
            return urls.toArray(java.net.URL[]::new);
        }
    }

    @Test
    void wordCountPublishesEachResultWithTheInputsKeyPropertiesEventTimeAndWhereItCameFrom() throws Exception {
        FunctionJars.wordCount(folder);
        String input = topic("sentences");
        String output = input + "-counts";
        Settle settle = start("word-count", input, """
                function: com.example.wordcount.WordCountFunction
                jar: word-count.jar
                output: %s
                config: {minLength: 4}
                """.formatted(output));
        send(input, "the quick brown fox", "k1", Map.of("source", "a"));
        send(input, "jumps over the lazy dog", "k2", Map.of("source", "b"));
        MessageId timedId;
        try (Producer<String> producer = pulsar.client()
                .newProducer(Schema.STRING)
                .topic(input)
                .enableBatching(false)
                .create()) {
            timedId = producer.newMessage()
                    .value("settle")
                    .eventTime(1_700_000_000_000L)
                    .send();
        }

        List<Message<String>> outputs = read(output, 3, Duration.ofSeconds(30));

        assertThat(values(outputs)).containsExactly("jumps over the lazy dog=3", "settle=1", "the quick brown fox=2");
        Message<String> first = outputs.stream()
                .filter(m -> m.getValue().startsWith("the quick"))
                .findFirst()
                .orElseThrow();
        assertThat(first.getKey()).isEqualTo("k1");
        assertThat(first.getProperties()).containsEntry("source", "a");
        Message<String> timed = outputs.stream()
                .filter(m -> m.getValue().startsWith("settle"))
                .findFirst()
                .orElseThrow();
        assertThat(timed.getEventTime()).isEqualTo(1_700_000_000_000L);
        // As Pulsar Functions' outputs: where each came from, the id as MessageId.toByteArray in Base64.
        assertThat(timed.getProperties()).containsEntry("__pfn_input_topic__", input);
        assertThat(MessageId.fromByteArray(Base64.getDecoder().decode(timed.getProperty("__pfn_input_msg_id__"))))
                .isEqualTo(timedId);
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "word-count") == 0);
        assertThat(metric(settle, "settle_function_metric_count{subscription=\"word-count\",name=\"words\"}"))
                .isEqualTo(3);
        assertThat(metric(settle, "settle_function_metric_sum{subscription=\"word-count\",name=\"words\"}"))
                .isEqualTo(6);
        assertThat(metric(settle, "settle_outcomes_total{subscription=\"word-count\",outcome=\"ack\"}"))
                .isEqualTo(3);
    }

    @Test
    void routerSendsByKeyAndPropertiesThroughNewOutputMessageToASecondTopic() throws Exception {
        FunctionJars.router(folder);
        String input = topic("requests");
        String output = input + "-standard";
        String priority = input + "-priority";
        start("router", input, """
                function: com.example.routing.PriorityRouter
                jar: router.jar
                output: %s
                config: {priorityTopic: %s}
                """.formatted(output, priority));
        send(input, "Hello", "alice", Map.of("tier", "vip"));
        send(input, "World", "bob", Map.of("tier", "standard"));

        List<Message<String>> vip = read(priority, 1, Duration.ofSeconds(30));
        List<Message<String>> standard = read(output, 1, Duration.ofSeconds(10));

        assertThat(vip).hasSize(1);
        assertThat(vip.get(0).getValue()).isEqualTo("HELLO");
        assertThat(vip.get(0).getKey()).isEqualTo("alice");
        assertThat(vip.get(0).getProperty("routed-from")).isEqualTo(input);
        assertThat(values(standard)).containsExactly("world");
        assertThat(standard.get(0).getKey()).isEqualTo("bob");
        assertThat(standard.get(0).getProperty("tier")).isEqualTo("standard");
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "router") == 0);
    }

    @Test
    void aFunctionReturningNullAcknowledgesWithoutPublishing() throws Exception {
        FunctionJars.filter(folder);
        String input = topic("lines");
        String output = input + "-loud";
        Settle settle = start("filter", input, """
                function: com.example.filter.ExclamationFilter
                jar: filter.jar
                output: %s
                """.formatted(output));
        for (String line : List.of("hello", "# a comment", " ", "world")) {
            send(input, line, null, Map.of());
        }

        assertThat(values(read(output, 2, Duration.ofSeconds(30)))).containsExactly("hello!", "world!");
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "filter") == 0);
        assertThat(metric(settle, "settle_outcomes_total{subscription=\"filter\",outcome=\"ack\"}"))
                .isEqualTo(4);
    }

    @Test
    void aFunctionThatThrowsReachesTheDeadLetterTopicAfterMaxAttemptsWithNoOutput() throws Exception {
        FunctionJars.parser(folder);
        String input = topic("order-lines");
        String output = input + "-parsed";
        String dlq = input + "-dlq";
        Settle settle = start("parser", input, """
                function: com.example.orders.ParseOrder
                jar: parser.jar
                output: %s
                maxAttempts: 3
                deadLetterTopic: %s
                failureBackoff: {initial: 100ms, multiplier: 1, max: 100ms}
                """.formatted(output, dlq));
        send(input, "sku-1: 2", "o1", Map.of());
        send(input, "garbage", "o2", Map.of());

        List<Message<String>> dead = read(dlq, 1, Duration.ofSeconds(30));

        assertThat(values(dead)).containsExactly("garbage");
        assertThat(dead.get(0).getKey()).isEqualTo("o2");
        assertThat(values(read(output, 1, Duration.ofSeconds(10)))).containsExactly("sku-1 x2");
        assertThat(metric(settle, "settle_outcomes_total{subscription=\"parser\",outcome=\"error\"}"))
                .isEqualTo(3);
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "parser") == 0);
    }

    @Test
    void aJavaUtilFunctionRunsWithoutAnyPulsarType() throws Exception {
        FunctionJars.upperCase(folder);
        String input = topic("words");
        String output = input + "-upper";
        start("upper", input, """
                function: com.example.text.UpperCase
                jar: upper.jar
                output: %s
                """.formatted(output));
        send(input, "settle", "w", Map.of());

        List<Message<String>> outputs = read(output, 1, Duration.ofSeconds(30));
        assertThat(values(outputs)).containsExactly("SETTLE");
        assertThat(outputs.get(0).getKey()).isEqualTo("w");
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "upper") == 0);
    }

    /**
     * Leases (issue 44): a function has no extend, so the manifest's handlerTimeout is its lease: a call past it is
     * interrupted and settled as a timeout failure, an attempt, and dead-lettered at the cap with stage timeout.
     */
    @Test
    void aFunctionCallPastHandlerTimeoutIsInterruptedAndDeadLetteredAtTheCapWithStageTimeout() throws Exception {
        FunctionJars.sleeper(folder);
        String input = topic("slow");
        String deadLetters = input + "-dlq";
        Settle settle = start("slow", input, """
                function: com.example.slow.Sleeper
                jar: sleeper.jar
                output: %s
                handlerTimeout: 1s
                maxAttempts: 2
                deadLetterTopic: %s
                """.formatted(input + "-out", deadLetters));
        send(input, "stuck", "s", Map.of());

        List<Message<String>> letters = read(deadLetters, 1, Duration.ofSeconds(60));
        assertThat(letters)
                .singleElement()
                .satisfies(letter -> assertThat(letter.getProperties())
                        .containsEntry(dev.settle.runtime.deadletter.DeadLetterProperties.STAGE, "timeout"));
        assertThat(metric(settle, "settle_failures_total{stage=\"timeout\",subscription=\"slow\"}"))
                .isEqualTo(2);
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "slow") == 0);
    }

    @Test
    void aFunctionReturningAFutureIsSettledWhenItCompletes() throws Exception {
        FunctionJars.async(folder);
        String input = topic("ids");
        String output = input + "-enriched";
        Settle settle = start("async", input, """
                function: com.example.async.AsyncEnricher
                jar: async.jar
                output: %s
                concurrency: 4
                """.formatted(output));
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            send(input, "id-" + i, "k" + i, Map.of());
            expected.add("id-" + i + ":enriched");
        }

        assertThat(values(read(output, 20, Duration.ofSeconds(30)))).containsExactlyInAnyOrderElementsOf(expected);
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "async") == 0);
        assertThat(metric(settle, "settle_outcomes_total{subscription=\"async\",outcome=\"ack\"}"))
                .isEqualTo(20);
    }

    /**
     * A topic policy the broker enforces on every publish: messages larger than this many bytes are refused with
     * NotAllowed, and the producer carries on with the next. Waits until a probe send really fails.
     */
    private void refuseMessagesOn(String topic) throws Exception {
        pulsar.admin().topics().createNonPartitionedTopic(topic);
        pulsar.admin().topicPolicies().setMaxMessageSize(topic, 1);
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> {
                    try (Producer<String> probe = pulsar.client()
                            .newProducer(Schema.STRING)
                            .topic(topic)
                            .enableBatching(false)
                            .create()) {
                        probe.send("probe: is the policy in force yet?");
                        return false;
                    } catch (Exception refused) {
                        return true;
                    }
                });
    }

    @Test
    void anInputWhoseOutputCannotBeStoredIsNotAcknowledgedAndGoesThroughOnceTheTopicTakesItAgain() throws Exception {
        FunctionJars.upperCase(folder);
        String input = topic("unwritable-in");
        String output = input + "-out";
        refuseMessagesOn(output);
        Settle settle = start("unwritable", input, """
                function: com.example.text.UpperCase
                jar: upper.jar
                output: %s
                failureBackoff: {initial: 200ms, multiplier: 1, max: 200ms}
                """.formatted(output));
        send(input, "order-1", "o1", Map.of());

        // The send is refused: the input is a failure, comes back, and is refused again.
        await().atMost(Duration.ofSeconds(30))
                .until(() ->
                        metric(settle, "settle_outcomes_total{subscription=\"unwritable\",outcome=\"error\"}") >= 3);
        assertThat(backlog(input, "unwritable")).isEqualTo(1);
        assertThat(metric(settle, "settle_outcomes_total{subscription=\"unwritable\",outcome=\"ack\"}"))
                .isZero();

        pulsar.admin().topicPolicies().removeMaxMessageSize(output);

        List<Message<String>> outputs = read(output, 1, Duration.ofSeconds(30));
        assertThat(values(outputs).stream().filter(v -> !v.startsWith("probe"))).containsExactly("ORDER-1");
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "unwritable") == 0);
        assertThat(metric(settle, "settle_outcomes_total{subscription=\"unwritable\",outcome=\"ack\"}"))
                .isEqualTo(1);
    }

    @Test
    void aHandlerPublishingThroughTheSdkIsAcknowledgedOnlyOnceItsPublishIsDurable() throws Exception {
        FunctionJars.auditingHandler(folder);
        String input = topic("audited");
        String audit = input + "-audit";
        refuseMessagesOn(audit);
        Settle settle = start("audited", input, """
                handler: com.example.audit.AuditingHandler
                jar: auditing.jar
                failureBackoff: {initial: 200ms, multiplier: 1, max: 200ms}
                config: {auditTopic: %s}
                """.formatted(audit));
        send(input, "payment-7", "p7", Map.of());

        await().atMost(Duration.ofSeconds(30))
                .until(() -> metric(settle, "settle_outcomes_total{subscription=\"audited\",outcome=\"error\"}") >= 3);
        assertThat(backlog(input, "audited")).isEqualTo(1);
        assertThat(metric(settle, "settle_outcomes_total{subscription=\"audited\",outcome=\"ack\"}"))
                .isZero();

        pulsar.admin().topicPolicies().removeMaxMessageSize(audit);

        List<Message<String>> lines = read(audit, 1, Duration.ofSeconds(30)).stream()
                .filter(m -> !m.getValue().startsWith("probe"))
                .toList();
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0).getValue()).isEqualTo("seen payment-7");
        assertThat(lines.get(0).getKey()).isEqualTo("p7");
        assertThat(Integer.parseInt(lines.get(0).getProperty("attempt"))).isGreaterThanOrEqualTo(4);
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "audited") == 0);
        assertThat(metric(settle, "settle_outcomes_total{subscription=\"audited\",outcome=\"ack\"}"))
                .isEqualTo(1);
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
    @org.junit.jupiter.params.provider.ValueSource(
            strings = {"handler: com.example.errors.ThrowingHandler", "function: com.example.errors.ThrowingFunction"})
    void onExceptionDropsOneTypeAndRetriesAnotherAfterItsDelay(String code) throws Exception {
        FunctionJars.throwing(folder);
        String input = topic("mapped");
        String name = code.startsWith("handler") ? "mapped-handler" : "mapped-function";
        Settle settle = start(name, input, """
                %s
                jar: throwing.jar
                maxAttempts: 2
                deadLetterTopic: %s-dlq
                onException:
                  - type: java.lang.IllegalArgumentException
                    outcome: drop
                  - type: java.net.ConnectException
                    outcome: retryAfter 1500ms
                """.formatted(code, input));
        send(input, "invalid", null, Map.of());
        long sent = System.nanoTime();
        send(input, "down", null, Map.of());

        String prefix = "settle_outcomes_total{subscription=\"" + name + "\",outcome=";
        await().atMost(Duration.ofSeconds(30)).until(() -> metric(settle, prefix + "\"ack\"}") == 1);
        double tookSeconds = (System.nanoTime() - sent) / 1e9;
        // InvalidOrderException is an IllegalArgumentException: dropped, never retried nor dead-lettered.
        assertThat(metric(settle, prefix + "\"drop\"}")).isEqualTo(1);
        // ConnectException: held 1.5 s, then delivered again (attempt 2 succeeds); no failure counted.
        assertThat(metric(settle, prefix + "\"retry_after\"}")).isEqualTo(1);
        assertThat(metric(settle, prefix + "\"error\"}")).isZero();
        assertThat(tookSeconds).isGreaterThanOrEqualTo(1.5);
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, name) == 0);
        assertThat(read(input + "-dlq", 0, Duration.ofSeconds(1))).isEmpty();
    }

    @Test
    void recordFailIsAFailureAndRecordAckAnAckWithTheReturnValuePublishedFirstEachTime() throws Exception {
        FunctionJars.manualAck(folder);
        String input = topic("manual");
        String output = input + "-out";
        Settle settle = start("manual", input, """
                function: com.example.manual.ManualAck
                jar: manual.jar
                output: %s
                failureBackoff: {initial: 100ms, multiplier: 1, max: 100ms}
                """.formatted(output));
        send(input, "job", "j", Map.of());

        assertThat(values(read(output, 2, Duration.ofSeconds(30)))).containsExactly("job attempt 1", "job attempt 2");
        await().atMost(Duration.ofSeconds(10)).until(() -> backlog(input, "manual") == 0);
        assertThat(metric(settle, "settle_outcomes_total{subscription=\"manual\",outcome=\"error\"}"))
                .isEqualTo(1);
        assertThat(metric(settle, "settle_outcomes_total{subscription=\"manual\",outcome=\"ack\"}"))
                .isEqualTo(1);
    }
}
