package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.observe.Exposition;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.Waits;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.admin.PulsarAdminException;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionInitialPosition;
import org.apache.pulsar.client.api.SubscriptionType;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.common.policies.data.TransactionBufferStats;
import org.apache.pulsar.common.policies.data.TransactionMetadata;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * {@code guarantee: exactly-once} on a real broker: a delivery's outputs are read only when its transaction commits,
 * so the outputs of a failed attempt are never seen; the same function at at-least-once shows them (so the first
 * test can fail).
 *
 * <p>The tests run side by side: each has its own topics, folder and runtime (its metrics its own), and most of each
 * is waiting for transactions to end and for its readers to see nothing more.
 */
@Execution(ExecutionMode.CONCURRENT)
class ExactlyOnceIT {
    private static final int MESSAGES = 60;
    /** Inputs that fail every attempt: three each. */
    private static final int LETTERS = 20;
    /** The manifest lines of one transaction per delivery, where a test counts transactions per input. */
    private static final String ONE_PER_DELIVERY = """
                commitBatch: {maxDeliveries: 1}
            """;

    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @Test
    void theOutputsOfAFailedAttemptAreNeverReadAndEveryInputHasEachOutputOnce() throws Exception {
        Run run = runFlakyFunction("exactly-once", ONE_PER_DELIVERY);

        // Every input: its side message and its return value once each, although a third of them published both
        // and then failed on their first attempt.
        assertEachReadOnce(run.side, MESSAGES);
        assertEachReadOnce(run.output, MESSAGES);
        assertThat(metric(run.settle, "settle_transactions_total{subscription=\"flaky\",outcome=\"committed\"}"))
                .isEqualTo(MESSAGES);
        assertThat(metric(run.settle, "settle_transactions_total{subscription=\"flaky\",outcome=\"aborted\"}"))
                .isEqualTo(MESSAGES / 3);
        assertThat(metric(run.settle, "settle_transaction_commit_duration_seconds_count{subscription=\"flaky\"}"))
                .isEqualTo(MESSAGES);
    }

    /**
     * The same at the default {@code commitBatch}: deliveries share transactions, so far fewer commit than there are
     * inputs; a failure after a send aborts its whole transaction and every delivery of it comes back. Still each
     * input has each output once.
     */
    @Test
    void deliveriesThatShareATransactionAreAbortedTogetherAndEveryInputStillHasEachOutputOnce() throws Exception {
        Run run = runFlakyFunction("exactly-once", "");

        assertEachReadOnce(run.side, MESSAGES);
        assertEachReadOnce(run.output, MESSAGES);
        double committed =
                metric(run.settle, "settle_transactions_total{subscription=\"flaky\",outcome=\"committed\"}");
        assertThat(committed).isBetween(1.0, MESSAGES / 2.0);
        assertThat(metric(run.settle, "settle_transactions_total{subscription=\"flaky\",outcome=\"aborted\"}"))
                .isBetween(1.0, MESSAGES / 3.0);
        assertThat(metric(run.settle, "settle_transaction_commit_duration_seconds_count{subscription=\"flaky\"}"))
                .isEqualTo(committed);
    }

    /**
     * A delivery that fails before it sends anything leaves its transaction: the others of it commit, none is
     * aborted, and the failed input comes back alone. Each input has its output once.
     */
    @Test
    void aDeliveryThatFailsBeforeSendingLeavesItsTransactionToTheOthers() throws Exception {
        Run run = runFunction("early", """
                        package com.example.early;
                        import java.util.Set;
                        import java.util.concurrent.ConcurrentHashMap;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class Early implements Function<String, String> {
                            private static final Set<String> SEEN = ConcurrentHashMap.newKeySet();
                            @Override public String process(String input, Context context) {
                                int n = Integer.parseInt(input.substring(2));
                                if (n % 3 == 0 && SEEN.add(input)) {
                                    throw new IllegalStateException("first attempt of " + input + " fails");
                                }
                                return "out " + input;
                            }
                        }
                        """, "exactly-once", "", MESSAGES, "ack");

        assertEachReadOnce(run.output, MESSAGES);
        assertThat(metric(run.settle, "settle_outcomes_total{subscription=\"early\",outcome=\"error\"}"))
                .isEqualTo(MESSAGES / 3);
        assertThat(metric(run.settle, "settle_transactions_total{subscription=\"early\",outcome=\"aborted\"}"))
                .isZero();
        assertThat(metric(run.settle, "settle_transactions_total{subscription=\"early\",outcome=\"committed\"}"))
                .isBetween(1.0, MESSAGES / 2.0);
    }

    /**
     * A lone message's transaction commits as soon as the subscription has nothing more to hand out, not after
     * {@code commitBatch.maxDelay} (1 s here): five messages sent one at a time are each read downstream well within
     * the delay (the median of the five; without the idle close each would wait the whole second).
     */
    @Test
    void aLoneMessageDoesNotWaitOutTheBatchDelay() throws Exception {
        TestJar.at(folder.resolve("lone.jar"))
                .source("com.example.lone.Lone", """
                        package com.example.lone;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class Lone implements Function<String, String> {
                            @Override public String process(String input, Context context) {
                                return "out " + input;
                            }
                        }
                        """)
                .build();
        String input = "persistent://public/default/lone-" + System.nanoTime();
        pulsar.admin().topics().createNonPartitionedTopic(input);
        pulsar.admin().topics().createSubscription(input, "lone", MessageId.earliest);
        Path manifest = folder.resolve("lone.yaml");
        pulsar.manifest(manifest, """
                subscriptions:
                  - name: lone
                    topics: [%s]
                    function: com.example.lone.Lone
                    jar: lone.jar
                    output: %s-out
                    guarantee: exactly-once
                    commitBatch: {maxDeliveries: 100, maxDelay: 1s}
                """.formatted(input, input));
        InThisJvm.start(pulsar, manifest);
        List<Long> millis = new ArrayList<>();
        try (Consumer<String> reader = pulsar.client()
                        .newConsumer(Schema.STRING)
                        .topic(input + "-out")
                        .subscriptionName("reader")
                        .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                        .subscribe();
                org.apache.pulsar.client.api.Producer<String> producer =
                        pulsar.client().newProducer(Schema.STRING).topic(input).create()) {
            for (int i = 0; i < 5; i++) {
                long sent = System.nanoTime();
                producer.send("m-" + i);
                Message<String> output = reader.receive(30, TimeUnit.SECONDS);
                assertThat(output).as("the output of m-" + i).isNotNull();
                assertThat(output.getValue()).isEqualTo("out m-" + i);
                millis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent));
            }
        }
        System.out.println("a lone message, send to output read, ms: " + millis);
        assertThat(millis.stream().sorted().toList().get(2)).isLessThan(1_000L);
    }

    /** The same function at at-least-once: the failed attempts' side messages stay, so their inputs have two. */
    @Test
    void atLeastOnceKeepsTheOutputsOfAFailedAttempt() throws Exception {
        Run run = runFlakyFunction("at-least-once", "");

        assertThat(run.side).hasSize(MESSAGES);
        assertThat(run.side.values().stream().filter(copies -> copies == 2)).hasSize(MESSAGES / 3);
        assertThat(metric(run.settle, "settle_transactions_total{subscription=\"flaky\",outcome=\"committed\"}"))
                .isZero();
    }

    /**
     * A function that publishes a side message and then fails every attempt, at exactly-once with {@code maxAttempts:
     * 3}: each input's dead letter is read once, with its cause, and no side message of its three failed attempts
     * ever is. The letter and the input's acknowledgement are one transaction (of its own: the third attempt's is
     * aborted with its side message).
     */
    @Test
    void aDeadLetterIsReadOnceAndTheOutputsOfItsFailedAttemptsNever() throws Exception {
        Run run = runFailingFunction("exactly-once", ONE_PER_DELIVERY);

        assertThat(run.side).isEmpty();
        assertThat(run.output).isEmpty();
        assertEachReadOnce(run.letters, LETTERS);
        assertThat(run.causes).containsOnly("java.lang.IllegalStateException");
        // One committed transaction per letter; three aborted attempts per input.
        assertThat(metric(run.settle, "settle_transactions_total{subscription=\"failing\",outcome=\"committed\"}"))
                .isEqualTo(LETTERS);
        assertThat(metric(run.settle, "settle_transactions_total{subscription=\"failing\",outcome=\"aborted\"}"))
                .isEqualTo(3 * LETTERS);
    }

    /** The same at at-least-once: each failed attempt's side message stays, three per input. */
    @Test
    void atLeastOnceKeepsTheOutputsOfTheAttemptsThatWereDeadLettered() throws Exception {
        Run run = runFailingFunction("at-least-once", "");

        assertThat(run.letters).hasSize(LETTERS);
        assertThat(run.side)
                .hasSize(LETTERS)
                .allSatisfy((value, copies) -> assertThat(copies).as(value).isEqualTo(3));
    }

    /**
     * The broker refuses a transaction's acknowledgement of an input acknowledged already (here by the test's own
     * transaction, as another runtime's copy would be): the transaction is aborted, and every other input of it still
     * comes back and has its output once. Four inputs wait in their calls, sharing one transaction (a gate the test
     * holds shut), while the test acknowledges the first in a transaction of its own and commits it; then the gate
     * opens. The 4.2.4 broker takes the inputs of a refused request out of the consumer's unacknowledged ones before it
     * refuses the request, and an abort gives back only what its transaction holds: before Settle sent each input again
     * alone after a refused request, the other three were held by no one, left behind the read position (a backlog of
     * 3 for the test's 60 s, nothing unacknowledged, no negative acknowledgement taken) until the subscription's last
     * consumer leaves.
     */
    @Test
    void theOtherInputsOfATransactionWhoseAcknowledgementIsRefusedComeBack() throws Exception {
        TestJar.at(folder.resolve("gated.jar"))
                .source("com.example.gated.Gated", """
                        package com.example.gated;
                        import dev.settle.sdk.*;
                        import java.net.Socket;
                        public class Gated implements Handler<String> {
                            private Publisher<String> output;
                            private int gate;
                            @Override public void open(HandlerContext context) {
                                output = context.publisher(context.config().get("outputTopic"), String.class);
                                gate = Integer.parseInt(context.config().get("gatePort"));
                            }
                            @Override public Outcome handle(Delivery<String> delivery) throws Exception {
                                output.publish(delivery, "out " + delivery.value());
                                try (Socket waiting = new Socket("127.0.0.1", gate)) {
                                    waiting.getInputStream().read(); // until the test closes the connection
                                }
                                return Outcome.ack();
                            }
                        }
                        """)
                .services("com.example.gated.Gated")
                .build();
        String input = pulsar.topic("refused");
        String output = input + "-out";
        pulsar.admin().topics().createNonPartitionedTopic(input);
        pulsar.admin().topics().createNonPartitionedTopic(output);
        pulsar.admin().topics().createSubscription(input, "gated", MessageId.earliest);
        List<MessageId> ids = new ArrayList<>();
        try (org.apache.pulsar.client.api.Producer<String> producer = pulsar.client()
                .newProducer(Schema.STRING)
                .topic(input)
                .enableBatching(false)
                .create()) {
            for (String value : List.of("a", "b", "c", "d")) {
                ids.add(producer.send(value));
            }
        }
        try (Gate gate = new Gate(4);
                PulsarClient transactional = PulsarClient.builder()
                        .serviceUrl(pulsar.endpoints().serviceUrl())
                        .enableTransaction(true)
                        .build();
                Consumer<String> other = transactional
                        .newConsumer(Schema.STRING)
                        .topic(input)
                        .subscriptionName("gated")
                        .subscriptionType(SubscriptionType.Shared)
                        .receiverQueueSize(0) // takes nothing: it only acknowledges
                        .subscribe()) {
            Path manifest = pulsar.manifest(folder.resolve("gated.yaml"), """
                    subscriptions:
                      - name: gated
                        topics: [%s]
                        handler: com.example.gated.Gated
                        jar: gated.jar
                        config: {outputTopic: %s, gatePort: "%d"}
                        concurrency: 4
                        handlerTimeout: 60s
                        guarantee: exactly-once
                        commitBatch: {maxDeliveries: 100, maxDelay: 1s}
                    """.formatted(input, output, gate.port()));
            Settle settle = InThisJvm.start(pulsar, manifest);
            gate.awaitWaiting(Duration.ofSeconds(60));

            Transaction mine = transactional
                    .newTransaction()
                    .withTransactionTimeout(1, TimeUnit.MINUTES)
                    .build()
                    .get(30, TimeUnit.SECONDS);
            other.acknowledgeAsync(ids.get(0), mine).get(30, TimeUnit.SECONDS);
            mine.commit().get(30, TimeUnit.SECONDS);
            gate.open();

            pulsar.awaitBacklog(input, "gated", 0, Duration.ofSeconds(60));
            System.out.printf(
                    "refused acknowledgement: %d calls, transactions aborted %.0f, committed %.0f%n",
                    gate.calls(),
                    metric(settle, "settle_transactions_total{subscription=\"gated\",outcome=\"aborted\"}"),
                    metric(settle, "settle_transactions_total{subscription=\"gated\",outcome=\"committed\"}"));
            // The three that shared the refused transaction were called again: the case this test is about happened.
            assertThat(gate.calls()).isGreaterThanOrEqualTo(7);
        }
        Map<String, Integer> outputs = copies(output, new ArrayList<>());
        assertThat(outputs).containsOnlyKeys("out b", "out c", "out d");
        assertEachReadOnce(outputs, 3);
    }

    /**
     * A loopback port the gated handler's calls connect to and wait on: the first {@code held} connections are held
     * open until {@link #open()}, every later one closed at once. Counts the calls.
     */
    private static final class Gate implements AutoCloseable {
        private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        private final List<Socket> waiting = new CopyOnWriteArrayList<>();
        private final AtomicInteger calls = new AtomicInteger();
        private final int held;

        Gate(int held) throws IOException {
            this.held = held;
            Thread accepting = new Thread(this::accept, "gate");
            accepting.setDaemon(true);
            accepting.start();
        }

        int port() {
            return server.getLocalPort();
        }

        int calls() {
            return calls.get();
        }

        void awaitWaiting(Duration timeout) {
            Waits.until("the gated calls waiting", timeout, waiting::size, size -> size == held);
        }

        void open() throws IOException {
            for (Socket call : waiting) {
                call.close();
            }
        }

        private void accept() {
            try {
                while (true) {
                    Socket call = server.accept();
                    if (calls.incrementAndGet() <= held) {
                        waiting.add(call);
                    } else {
                        call.close();
                    }
                }
            } catch (IOException closed) {
                // the server socket closed with the test
            }
        }

        @Override
        public void close() throws IOException {
            open();
            server.close();
        }
    }

    private record Run(
            Settle settle,
            Map<String, Integer> output,
            Map<String, Integer> side,
            Map<String, Integer> letters,
            List<String> causes) {}

    /**
     * Runs a function that publishes a side message with {@code context.publish}, then fails the first attempt of
     * every third input (after the publish), and returns its output otherwise; waits until every input is
     * acknowledged and reads both topics back with a fresh consumer.
     */
    private Run runFlakyFunction(String guarantee, String commitBatch) throws Exception {
        return runFunction("flaky", """
                        package com.example.flaky;
                        import java.util.Set;
                        import java.util.concurrent.ConcurrentHashMap;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class Flaky implements Function<String, String> {
                            private static final Set<String> SEEN = ConcurrentHashMap.newKeySet();
                            @Override public String process(String input, Context context) throws Exception {
                                String side = context.getUserConfigValue("side").get().toString();
                                context.newOutputMessage(side, org.apache.pulsar.client.api.Schema.STRING)
                                        .value("side " + input).sendAsync();
                                int n = Integer.parseInt(input.substring(2));
                                if (n % 3 == 0 && SEEN.add(input)) {
                                    throw new IllegalStateException("first attempt of " + input + " fails");
                                }
                                return "out " + input;
                            }
                        }
                        """, guarantee, commitBatch, MESSAGES, "ack");
    }

    /**
     * Runs a function that publishes a side message with {@code context.publish} and then fails every attempt, with
     * {@code maxAttempts: 3}; waits until every input is dead-lettered and acknowledged and reads the topics back.
     */
    private Run runFailingFunction(String guarantee, String commitBatch) throws Exception {
        return runFunction("failing", """
                        package com.example.failing;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class Failing implements Function<String, String> {
                            @Override public String process(String input, Context context) throws Exception {
                                String side = context.getUserConfigValue("side").get().toString();
                                context.newOutputMessage(side, org.apache.pulsar.client.api.Schema.STRING)
                                        .value("side " + input).sendAsync();
                                throw new IllegalStateException("every attempt of " + input + " fails");
                            }
                        }
                        """, guarantee, commitBatch + """
                            maxAttempts: 3
                            deadLetterTopic: %s
                        """, LETTERS, "error");
    }

    /**
     * Runs {@code source}'s function {@code com.example.<name>.<Name>} on {@code MESSAGES} inputs (or {@code count}),
     * with a side topic and more manifest lines ({@code extra}, where one {@code %s} stands for a dead-letter topic);
     * waits until {@code count} deliveries were settled with {@code outcome} and the backlog is 0, then reads back the
     * output, side and dead-letter topics with fresh consumers.
     */
    private Run runFunction(String name, String source, String guarantee, String extra, int count, String outcome)
            throws Exception {
        String className = "com.example." + name + "." + Character.toUpperCase(name.charAt(0)) + name.substring(1);
        TestJar.at(folder.resolve(name + ".jar")).source(className, source).build();
        String input = "persistent://public/default/" + name + "-" + System.nanoTime();
        String output = input + "-out";
        String side = input + "-side";
        String letters = input + "-dlq";
        pulsar.admin().topics().createNonPartitionedTopic(input);
        pulsar.admin().topics().createSubscription(input, name, MessageId.earliest);
        Path manifest = folder.resolve(name + ".yaml");
        pulsar.manifest(
                manifest,
                """
                subscriptions:
                  - name: %s
                    topics: [%s]
                    function: %s
                    jar: %s.jar
                    output: %s
                    config: {side: %s}
                    concurrency: 4
                    failureBackoff: {initial: 10ms, max: 10ms}
                    handlerTimeout: 5s
                    guarantee: %s
                """.formatted(name, input, className, name, output, side, guarantee) + extra.formatted(letters));
        Deployment deployment = Preflight.check(manifest, Map.of());
        pulsar.closeAfterTest(deployment);
        Settle settle = pulsar.closeAfterTest(Settle.start(deployment, Duration.ofSeconds(5)));
        pulsar.publish(input, count, i -> String.format("m-%03d", i));
        String settled = "settle_outcomes_total{subscription=\"" + name + "\",outcome=\"" + outcome + "\"}";
        int settlements = outcome.equals("error") ? 3 * count : count;
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> metric(settle, settled) >= settlements && pulsar.backlog(input, name) == 0);
        // The topics read at once: each read ends when 3 s pass without a message.
        List<String> causes = new ArrayList<>();
        CompletableFuture<Map<String, Integer>> dead = extra.contains("deadLetterTopic")
                ? reading(letters, causes)
                : CompletableFuture.completedFuture(Map.of());
        CompletableFuture<Map<String, Integer>> outputs = reading(output, new ArrayList<>());
        CompletableFuture<Map<String, Integer>> sides = reading(side, new ArrayList<>());
        return new Run(
                settle,
                outputs.get(3, TimeUnit.MINUTES),
                sides.get(3, TimeUnit.MINUTES),
                dead.get(3, TimeUnit.MINUTES),
                causes);
    }

    /** {@link #copies} on a thread of its own. */
    private CompletableFuture<Map<String, Integer>> reading(String topic, List<String> causes) {
        CompletableFuture<Map<String, Integer>> read = new CompletableFuture<>();
        Thread reader = new Thread(
                () -> {
                    try {
                        read.complete(copies(topic, causes));
                    } catch (Throwable failed) {
                        read.completeExceptionally(failed);
                    }
                },
                "read " + topic);
        reader.setDaemon(true);
        reader.start();
        return read;
    }

    /**
     * Every value of {@code topic} with how often it was read, by a fresh consumer from the start (in bytes: a dead
     * letter has the input's schema); each one's dead-letter exception class, if it has one, goes to {@code causes}.
     */
    private Map<String, Integer> copies(String topic, List<String> causes) throws Exception {
        // A reader is dispatched committed messages only up to the first of a transaction still open on the topic
        // (docs/exactly-once.md, "Limits"): wait until none is, at most past the 35 s transaction timeout.
        try {
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> noOpenTransaction(topic));
        } catch (ConditionTimeoutException stillOpen) {
            // Past the transaction timeout: say which transactions the coordinator still has, and in what state.
            throw new AssertionError(
                    "a transaction is still open on " + topic + " after 60 s; the topic's transaction buffer: "
                            + describe(pulsar.admin().transactions().getTransactionBufferStats(topic))
                            + "; the coordinator's transactions older than 1 s: "
                            + pulsar.admin().transactions().getSlowTransactions(1, TimeUnit.SECONDS).values().stream()
                                    .map(ExactlyOnceIT::describe)
                                    .toList(),
                    stillOpen);
        }
        Map<String, Integer> copies = new TreeMap<>();
        try (Consumer<byte[]> reader = pulsar.client()
                .newConsumer(Schema.BYTES)
                .topic(topic)
                .subscriptionName("reader-" + System.nanoTime())
                .subscriptionInitialPosition(SubscriptionInitialPosition.Earliest)
                .subscribe()) {
            // The first may take a while on a loaded machine (the reader's lookup and first dispatch); then until 3 s
            // pass without one.
            for (Message<byte[]> message = reader.receive(10, TimeUnit.SECONDS);
                    message != null;
                    message = reader.receive(3, TimeUnit.SECONDS)) {
                copies.merge(new String(message.getData(), StandardCharsets.UTF_8), 1, Integer::sum);
                if (message.hasProperty(DeadLetterProperties.EXCEPTION_CLASS)) {
                    causes.add(message.getProperty(DeadLetterProperties.EXCEPTION_CLASS));
                }
            }
        }
        return copies;
    }

    /** Whether no transaction is open on {@code topic}; a topic never written to has none. */
    private boolean noOpenTransaction(String topic) throws PulsarAdminException {
        try {
            return pulsar.admin().transactions().getTransactionBufferStats(topic).ongoingTxnSize == 0;
        } catch (PulsarAdminException.NotFoundException neverWritten) {
            return true;
        }
    }

    private static String describe(TransactionBufferStats buffer) {
        return buffer.state + ", " + buffer.ongoingTxnSize + " open, max read position " + buffer.maxReadPosition;
    }

    private static String describe(TransactionMetadata transaction) {
        return transaction.txnId + " " + transaction.status + " (opened " + transaction.openTimestamp + ", times out "
                + transaction.timeoutAt + ", sent to " + transaction.producedPartitions.keySet() + ")";
    }

    /** {@code count} distinct values in {@code copies}, each read once. */
    private static void assertEachReadOnce(Map<String, Integer> copies, int count) {
        assertThat(copies)
                .hasSize(count)
                .allSatisfy((value, n) -> assertThat(n).as(value).isEqualTo(1));
    }

    private static double metric(Settle settle, String sample) {
        Double value = Exposition.of(settle.metrics().registry()).value(sample);
        return value == null ? 0 : value;
    }
}
