package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.settle.runtime.ReloadResult;
import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.policies.data.ConsumerStats;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Manifest reloads against a real broker (docs/live-code.md, "Manifest reload"): a subscription added, one
 * removed, one's handler swapped, one's consumer setting changed, in one edit, while messages flow; only the changed
 * subscriptions notice (the broker's consumer of the others stays the same one, and each of their messages is
 * handled once, on its first delivery); an invalid edit changes nothing; and {@code settle run} picks up a
 * Kubernetes-style ConfigMap symlink swap by itself and a rebuilt JAR on SIGHUP.
 */
class ManifestReloadIT {
    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private Path out;

    @BeforeEach
    void setUp() throws Exception {
        out = folder.resolve("handled.txt");
        Files.createFile(out);
    }

    /** A String handler that appends "label value attempt" to the file its config's {@code out} names. */
    private Path recorder(String jar, String label) {
        return TestJar.at(folder.resolve(jar))
                .source("test.Recorder", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.nio.charset.StandardCharsets;
                        import java.nio.file.*;
                        public class Recorder implements Handler<String> {
                            private Path out;
                            @Override public void open(HandlerContext context) {
                                out = Path.of(context.config().get("out"));
                            }
                            @Override public Outcome handle(Delivery<String> delivery) throws Exception {
                                String line = "%s " + delivery.value() + " " + delivery.attempt() + "\\n";
                                synchronized (Recorder.class.getClassLoader().getParent()) {
                                    Files.write(out, line.getBytes(StandardCharsets.UTF_8),
                                            StandardOpenOption.APPEND);
                                }
                                return Outcome.ack();
                            }
                        }
                        """.formatted(label))
                .services("test.Recorder")
                .build();
    }

    /**
     * A String handler as {@link #recorder}'s whose {@code open()} throws while {@code brokenWhile} exists, and whose
     * constructor notes its class loader, held weakly, in {@link #loaders()}.
     */
    private Path openable(String jar, String label, Path brokenWhile) {
        return TestJar.at(folder.resolve(jar))
                .source("test.Openable", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.nio.charset.StandardCharsets;
                        import java.nio.file.*;
                        public class Openable implements Handler<String> {
                            private Path out;
                            public Openable() {
                                %s
                            }
                            @Override public void open(HandlerContext context) {
                                if (Files.exists(Path.of("%s"))) {
                                    throw new IllegalStateException("%s cannot open while %s exists");
                                }
                                out = Path.of(context.config().get("out"));
                            }
                            @Override public Outcome handle(Delivery<String> delivery) throws Exception {
                                String line = "%s " + delivery.value() + " " + delivery.attempt() + "\\n";
                                synchronized (Openable.class.getClassLoader().getParent()) {
                                    Files.write(out, line.getBytes(StandardCharsets.UTF_8),
                                            StandardOpenOption.APPEND);
                                }
                                return Outcome.ack();
                            }
                        }
                        """.formatted(noteLoader(), brokenWhile, label, brokenWhile, label))
                .services("test.Openable")
                .build();
    }

    /**
     * A Pulsar Function that appends "label value 1" to {@link #out} and, once closed, "label closed 0": its
     * constructor notes its class loader, held weakly, in {@link #loaders()}.
     */
    private Path tagger(String jar, String label) {
        return TestJar.at(folder.resolve(jar))
                .source("test.Tagger", """
                        package test;
                        import java.nio.charset.StandardCharsets;
                        import java.nio.file.*;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class Tagger implements Function<String, Void> {
                            public Tagger() {
                                %s
                            }
                            private static void write(String line) throws Exception {
                                synchronized (Tagger.class.getClassLoader().getParent()) {
                                    Files.write(Path.of("%s"), (line + "\\n").getBytes(StandardCharsets.UTF_8),
                                            StandardOpenOption.APPEND);
                                }
                            }
                            @Override public Void process(String input, Context context) throws Exception {
                                write("%s " + input + " 1");
                                return null;
                            }
                            @Override public void close() throws Exception {
                                write("%s closed 0");
                            }
                        }
                        """.formatted(noteLoader(), out, label, label))
                .build();
    }

    /** The key in the system properties under which the test's handlers and functions note their loaders. */
    private final String loadersKey = "settle.test.loaders." + System.nanoTime();

    /** Java source that adds a weak reference to the class's loader to the list under {@link #loadersKey}. */
    private String noteLoader() {
        return """
                ((java.util.List<Object>) System.getProperties().computeIfAbsent("%s",
                        key -> new java.util.concurrent.CopyOnWriteArrayList<Object>()))
                        .add(new java.lang.ref.WeakReference<>(getClass().getClassLoader()));
                """.formatted(loadersKey);
    }

    /** The class loaders the test's handlers and functions were constructed in, held weakly. */
    @SuppressWarnings("unchecked")
    private List<java.lang.ref.WeakReference<ClassLoader>> loaders() {
        return (List<java.lang.ref.WeakReference<ClassLoader>>)
                System.getProperties().getOrDefault(loadersKey, List.of());
    }

    record Handled(String label, String value, int attempt) {}

    private List<Handled> handled() throws IOException {
        return Files.readAllLines(out).stream()
                .filter(line -> !line.isBlank())
                .map(line -> line.split(" "))
                .filter(parts -> parts.length == 3)
                .map(parts -> new Handled(parts[0], parts[1], Integer.parseInt(parts[2])))
                .toList();
    }

    private String topic(String name) {
        return pulsar.topic("reload-" + name);
    }

    private String subscription(String name, String topic, String jar, String extra) {
        return """
                  - name: %s
                    topics: [%s]
                    jar: %s
                %s    config:
                      out: %s
                """.formatted(name, topic, jar, extra.isEmpty() ? "" : "    " + extra + "\n", out);
    }

    /** Starts a process with SIGHUP at its default whatever this one's is (GNU coreutils' env). */
    private static final List<String> SIGHUP_AT_ITS_DEFAULT = List.of("env", "--default-signal=HUP");

    private String manifest(String... subscriptions) {
        return """
                pulsar:
                  serviceUrl: %s
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                shutdown:
                  grace: 5s
                subscriptions:
                %s""".formatted(pulsar.endpoints().serviceUrl(), String.join("", subscriptions));
    }

    /** The broker's one consumer of a subscription: its name and when it connected; null when there is none. */
    private String consumerOf(String topic, String subscription) throws Exception {
        var stats = pulsar.admin().topics().getStats(topic).getSubscriptions().get(subscription);
        if (stats == null || stats.getConsumers().isEmpty()) {
            return null;
        }
        ConsumerStats consumer = stats.getConsumers().get(0);
        return consumer.getConsumerName() + " since " + consumer.getConnectedSince();
    }

    private void await(Supplier<Boolean> condition, Duration timeout) {
        Waits.until("a condition on what was handled", timeout, condition::get, () -> handled());
    }

    private boolean handledValue(String value) {
        try {
            return handled().stream().anyMatch(h -> h.value().equals(value));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private boolean handledBy(String label) {
        try {
            return handled().stream().anyMatch(h -> h.label().equals(label));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private Producer<String> producer(String topic) throws Exception {
        return pulsar.closeAfterTest(pulsar.client()
                .newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create());
    }

    /** Sends "prefix-1", "prefix-2", ... to each producer in turn every 10 ms until stopped; how many each. */
    private static Thread sender(Map<String, Producer<String>> producers, AtomicBoolean stop, int[] sent) {
        Thread thread = new Thread(() -> {
            try {
                while (!stop.get()) {
                    sent[0]++;
                    for (Map.Entry<String, Producer<String>> producer : producers.entrySet()) {
                        producer.getValue().send(producer.getKey() + "-" + sent[0]);
                    }
                    Waits.pause(Duration.ofMillis(10), "the sender's pace: messages keep flowing through the reload");
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        thread.start();
        return thread;
    }

    @Test
    void aReloadStartsStopsSwapsAndRestartsOnlyTheSubscriptionsThatChanged() throws Exception {
        recorder("a.jar", "a1");
        recorder("b1.jar", "b1");
        recorder("b2.jar", "b2");
        recorder("c.jar", "c1");
        recorder("d.jar", "d1");
        recorder("e.jar", "e1");
        String ta = topic("a"), tb = topic("b"), tc = topic("c"), td = topic("d"), te = topic("e");
        Path file = folder.resolve("settle.yaml");
        Files.writeString(
                file,
                manifest(
                        subscription("a", ta, "a.jar", ""),
                        subscription("b", tb, "b1.jar", ""),
                        subscription("c", tc, "c.jar", ""),
                        subscription("d", td, "d.jar", "")));
        Settle settle = Settle.start(Preflight.check(file, System.getenv()), Duration.ofSeconds(5));
        pulsar.closeAfterTest(() -> settle.deployment().close());
        pulsar.closeAfterTest(settle);
        Map<String, Producer<String>> producers = new LinkedHashMap<>();
        producers.put("a", producer(ta));
        producers.put("b", producer(tb));
        producers.put("c", producer(tc));
        Producer<String> toD = producer(td);
        toD.send("d-0");
        await(() -> handledValue("d-0"), Duration.ofSeconds(30));
        Map<String, String> before = new LinkedHashMap<>();
        for (String[] sub : new String[][] {{"a", ta}, {"b", tb}, {"c", tc}, {"d", td}}) {
            await(() -> consumer(sub[1], sub[0]) != null, Duration.ofSeconds(30));
            before.put(sub[0], consumerOf(sub[1], sub[0]));
        }
        AtomicBoolean stop = new AtomicBoolean();
        int[] sent = new int[1];
        Thread sending = sender(producers, stop, sent);
        // Until b1 has handled some of b (a fixed 500 ms was too short on a loaded machine).
        await(() -> handledValue("b-1"), Duration.ofSeconds(30));

        Files.writeString(
                file,
                manifest(
                        subscription("a", ta, "a.jar", ""),
                        subscription("b", tb, "b2.jar", ""),
                        subscription("c", tc, "c.jar", "receiverQueueSize: 10"),
                        subscription("e", te, "e.jar", "")));
        long edited = System.nanoTime();
        int sentAtEdit = sent[0];
        assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.APPLIED);
        long reloaded = System.nanoTime();
        // Until b2 has handled some of b too, sent after the edit (a fixed 700 ms was too short on a loaded machine).
        await(() -> handledBy("b2"), Duration.ofSeconds(30));
        stop.set(true);
        sending.join();
        int total = sent[0];
        for (String prefix : List.of("a", "b", "c")) {
            await(() -> handledValue(prefix + "-" + total), Duration.ofSeconds(30));
        }
        producer(te).send("e-1");
        await(() -> handledValue("e-1"), Duration.ofSeconds(30));

        List<Handled> handled = handled();
        for (String prefix : List.of("a", "b", "c")) {
            List<Handled> of = handled.stream()
                    .filter(h -> h.value().startsWith(prefix + "-"))
                    .toList();
            // Each message handled once, on its first delivery: nothing redelivered, nothing lost.
            assertThat(of).as(prefix).hasSize(total);
            assertThat(of.stream().map(Handled::value).distinct().count())
                    .as(prefix)
                    .isEqualTo(total);
            assertThat(of).as(prefix).allMatch(h -> h.attempt() == 1);
        }
        List<String> bLabels = handled.stream()
                .filter(h -> h.value().startsWith("b-"))
                .map(Handled::label)
                .toList();
        int firstNew = bLabels.indexOf("b2");
        assertThat(firstNew).as("b2 handled some of b").isPositive();
        assertThat(bLabels.subList(firstNew, bLabels.size()))
                .as("no b1 after the first b2")
                .containsOnly("b2");
        assertThat(bLabels.subList(0, Math.min(sentAtEdit, firstNew))).containsOnly("b1");
        assertThat(handled.stream().filter(h -> h.value().startsWith("a-")))
                .allMatch(h -> h.label().equals("a1"));
        assertThat(consumerOf(ta, "a")).as("a's consumer is the same one").isEqualTo(before.get("a"));
        assertThat(consumerOf(tb, "b"))
                .as("b's consumer stays open through the swap")
                .isEqualTo(before.get("b"));
        assertThat(consumerOf(tc, "c"))
                .as("c's consumer is a new one")
                .isNotNull()
                .isNotEqualTo(before.get("c"));
        assertThat(consumerOf(td, "d")).as("d has no consumer").isNull();
        System.out.printf(
                "reload applied in %.1f ms; a message sent every 10 ms to a, b, c: %d each, %d after the edit%n",
                (reloaded - edited) / 1e6, total, total - sentAtEdit);

        // An invalid edit: every problem logged with its line, nothing touched.
        Map<String, String> after = new LinkedHashMap<>();
        for (String[] sub : new String[][] {{"a", ta}, {"b", tb}, {"c", tc}, {"e", te}}) {
            after.put(sub[0], consumerOf(sub[1], sub[0]));
        }
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.addAppender(logs);
        try {
            Files.writeString(
                    file,
                    manifest(
                            subscription("a", ta, "a.jar", "concurrency: 0"),
                            subscription("b", tb, "missing.jar", ""),
                            subscription("e", te, "e.jar", "")));
            assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.REFUSED);
        } finally {
            root.detachAppender(logs);
        }
        List<String> errors =
                logs.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
        assertThat(errors)
                .anyMatch(line -> line.matches(".*settle\\.yaml:\\d+:\\d+: subscriptions\\[0\\]\\.concurrency.*"));
        assertThat(errors).anyMatch(line -> line.matches(".*settle\\.yaml:\\d+:\\d+: subscriptions\\[1\\]\\.jar.*"));
        for (String[] sub : new String[][] {{"a", ta}, {"b", tb}, {"c", tc}, {"e", te}}) {
            assertThat(consumerOf(sub[1], sub[0])).as(sub[0]).isEqualTo(after.get(sub[0]));
        }
        producers.get("b").send("b-after-refusal");
        await(() -> handledValue("b-after-refusal"), Duration.ofSeconds(30));
        assertThat(handled().stream().filter(h -> h.value().equals("b-after-refusal")))
                .extracting(Handled::label)
                .containsExactly("b2");
        String metrics = SettleProcess.body(settle.httpPort(), "/metrics");
        assertThat(metrics)
                .contains("settle_manifest_reloads_total{result=\"applied\"} 1.0")
                .contains("settle_manifest_reloads_total{result=\"refused\"} 1.0");
    }

    @Test
    void withTheAdminApiAReloadsCodeChangeIsTheNextGenerationAndAddingASubscriptionIsRefused() throws Exception {
        recorder("one.jar", "one");
        recorder("two.jar", "two");
        recorder("other.jar", "other");
        Files.writeString(folder.resolve("token.txt"), "a-token-for-the-test-of-32-characters\n");
        String topic = topic("admin"), other = topic("other");
        String admin = """
                admin:
                  port: 0
                  token: {file: token.txt}
                  dataDir: data
                """;
        Path file = folder.resolve("settle.yaml");
        Files.writeString(
                file,
                manifest(subscription("live", topic, "one.jar", ""))
                        .replace("subscriptions:", admin + "subscriptions:"));
        Settle settle = Settle.start(Preflight.check(file, System.getenv()), Duration.ofSeconds(5));
        pulsar.closeAfterTest(() -> settle.deployment().close());
        pulsar.closeAfterTest(settle);
        Producer<String> producer = producer(topic);
        producer.send("before");
        await(() -> handledValue("before"), Duration.ofSeconds(30));
        await(() -> consumer(topic, "live") != null, Duration.ofSeconds(30));
        String consumer = consumerOf(topic, "live");

        Files.writeString(
                file,
                manifest(subscription("live", topic, "two.jar", ""))
                        .replace("subscriptions:", admin + "subscriptions:"));
        assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.APPLIED);
        producer.send("after");
        await(() -> handledValue("after"), Duration.ofSeconds(30));
        assertThat(handled()).extracting(Handled::label).containsExactly("one", "two");
        assertThat(consumerOf(topic, "live")).isEqualTo(consumer);
        var status = settle.live().orElseThrow().status("live").orElseThrow();
        assertThat(status.active().number()).isEqualTo(2);
        assertThat(status.active().source()).isEqualTo(dev.settle.runtime.live.GenerationRecord.Source.MANIFEST);
        assertThat(status.active().sha256()).isEqualTo(dev.settle.runtime.live.JarDigest.of(folder.resolve("two.jar")));
        assertThat(status.kept()).extracting(g -> g.number()).containsExactly(2, 1);
        assertThat(SettleProcess.body(settle.httpPort(), "/metrics"))
                .contains("settle_swaps_total{result=\"reloaded\",subscription=\"live\"} 1.0");

        Files.writeString(
                file,
                manifest(subscription("live", topic, "two.jar", ""), subscription("other", other, "other.jar", ""))
                        .replace("subscriptions:", admin + "subscriptions:"));
        assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.REFUSED);
        assertThat(consumer(other, "other")).isNull();
        // Dead-letter settings the running generation was opened with: refused too.
        Files.writeString(
                file,
                manifest(subscription(
                                "live",
                                topic,
                                "two.jar",
                                "maxAttempts: 3\n    deadLetterTopic: persistent://public/default/live-dlq"))
                        .replace("subscriptions:", admin + "subscriptions:"));
        assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.REFUSED);
        assertThat(consumerOf(topic, "live")).isEqualTo(consumer);
        producer.send("still");
        await(() -> handledValue("still"), Duration.ofSeconds(30));
        assertThat(handled()).extracting(Handled::label).containsExactly("one", "two", "two");
    }

    /**
     * Issue 41, item 7: a restart whose new code cannot open leaves the running subscription as it was (the same
     * consumer, the old code handling) and the reload is reported as failed; the next reload of it, once the code
     * opens, applies it. Failed before: the reload counted as applied, the subscription stopped and out of /readyz.
     */
    @Test
    void aRestartWhoseNewCodeCannotOpenKeepsTheRunningSubscriptionAndTheNextReloadAppliesIt() throws Exception {
        recorder("a1.jar", "a1");
        Path broken = Files.createFile(folder.resolve("a2-broken"));
        openable("a2.jar", "a2", broken);
        String ta = topic("a");
        Path file = folder.resolve("settle.yaml");
        Files.writeString(file, manifest(subscription("a", ta, "a1.jar", "")));
        Settle settle = Settle.start(Preflight.check(file, System.getenv()), Duration.ofSeconds(5));
        pulsar.closeAfterTest(() -> settle.deployment().close());
        pulsar.closeAfterTest(settle);
        Producer<String> producer = producer(ta);
        producer.send("a-0");
        await(() -> handledValue("a-0"), Duration.ofSeconds(30));
        await(() -> consumer(ta, "a") != null, Duration.ofSeconds(30));
        String before = consumerOf(ta, "a");

        Files.writeString(file, manifest(subscription("a", ta, "a2.jar", "concurrency: 2")));
        assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.FAILED);
        assertThat(consumerOf(ta, "a")).as("the running consumer is untouched").isEqualTo(before);
        assertThat(SettleProcess.status(settle.httpPort(), "/readyz")).isEqualTo(200);
        producer.send("a-1");
        await(() -> handledValue("a-1"), Duration.ofSeconds(30));
        assertThat(SettleProcess.body(settle.httpPort(), "/metrics"))
                .contains("settle_manifest_reloads_total{result=\"failed\"} 1.0");

        Files.delete(broken);
        assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.APPLIED);
        producer.send("a-2");
        await(() -> handledValue("a-2"), Duration.ofSeconds(30));
        assertThat(handled()).extracting(Handled::label).containsExactly("a1", "a1", "a2");
        await(() -> SettleProcess.status(settle.httpPort(), "/readyz") == 200, Duration.ofSeconds(30));
    }

    /**
     * Issue 41, item 7: an added subscription whose code cannot open is shown unready with its cause, retried with
     * backoff until it opens, and a later reload touching it works; one that never opens is applied by the next reload
     * that fixes its code. Failed before: the reload counted as applied, the subscription was never retried, and a
     * reload touching it threw NullPointerException.
     */
    @Test
    void anAddedSubscriptionWhoseCodeCannotOpenIsRetriedShownUnreadyAndTheNextReloadWorks() throws Exception {
        recorder("a.jar", "a");
        Path broken = Files.createFile(folder.resolve("b-broken"));
        openable("b.jar", "b", broken);
        Path forever = Files.createFile(folder.resolve("c-broken"));
        openable("c-broken.jar", "cx", forever);
        recorder("c.jar", "c");
        String ta = topic("a"), tb = topic("b"), tc = topic("c");
        Path file = folder.resolve("settle.yaml");
        Files.writeString(file, manifest(subscription("a", ta, "a.jar", "")));
        Settle settle = Settle.start(Preflight.check(file, System.getenv()), Duration.ofSeconds(5));
        pulsar.closeAfterTest(() -> settle.deployment().close());
        pulsar.closeAfterTest(settle);
        await(() -> SettleProcess.status(settle.httpPort(), "/readyz") == 200, Duration.ofSeconds(30));

        Files.writeString(file, manifest(subscription("a", ta, "a.jar", ""), subscription("b", tb, "b.jar", "")));
        assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.FAILED);
        assertThat(SettleProcess.get(settle.httpPort(), "/readyz"))
                .satisfies(response -> assertThat(response.statusCode()).isEqualTo(503))
                .satisfies(response ->
                        assertThat(response.body()).contains("subscription 'b'").contains("b cannot open while"));
        Files.delete(broken);
        // Retried with backoff: up by itself once its code opens, with no reload.
        producer(tb).send("b-1");
        await(() -> handledValue("b-1"), Duration.ofSeconds(60));
        await(() -> SettleProcess.status(settle.httpPort(), "/readyz") == 200, Duration.ofSeconds(30));

        Files.writeString(
                file,
                manifest(
                        subscription("a", ta, "a.jar", ""),
                        subscription("b", tb, "b.jar", "concurrency: 2"),
                        subscription("c", tc, "c-broken.jar", "")));
        assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.FAILED);
        Files.writeString(
                file,
                manifest(
                        subscription("a", ta, "a.jar", ""),
                        subscription("b", tb, "b.jar", "concurrency: 2"),
                        subscription("c", tc, "c.jar", "")));
        assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.APPLIED);
        producer(tb).send("b-2");
        producer(tc).send("c-1");
        await(() -> handledValue("b-2") && handledValue("c-1"), Duration.ofSeconds(30));
        await(() -> SettleProcess.status(settle.httpPort(), "/readyz") == 200, Duration.ofSeconds(30));
        assertThat(handled()).extracting(Handled::label).containsExactlyInAnyOrder("b", "b", "c");
    }

    private static final String ADMIN = """
            admin:
              port: 0
              token: {file: token.txt}
              dataDir: data
            """;

    /**
     * Issue 41, item 6: with {@code admin:} on, a reload that restarts a Pulsar Function (its {@code concurrency}
     * changed) starts it again and closes the old instance. Failed before: the reload threw after the old driver
     * stopped, the function stayed stopped, out of /readyz, and its old instance was never closed.
     */
    @Test
    void withTheAdminApiAReloadRestartsAFunctionAndClosesTheOldInstance() throws Exception {
        tagger("f.jar", "f");
        Files.writeString(folder.resolve("token.txt"), "a-token-for-the-test-of-32-characters\n");
        String tf = topic("f");
        String function = """
                  - name: f
                    topics: [%s]
                    function: test.Tagger
                    jar: f.jar
                %s""";
        Path file = folder.resolve("settle.yaml");
        Files.writeString(
                file, manifest(function.formatted(tf, "")).replace("subscriptions:", ADMIN + "subscriptions:"));
        Settle settle = Settle.start(Preflight.check(file, System.getenv()), Duration.ofSeconds(5));
        pulsar.closeAfterTest(() -> settle.deployment().close());
        pulsar.closeAfterTest(settle);
        Producer<String> producer = producer(tf);
        producer.send("f-0");
        await(() -> handledValue("f-0"), Duration.ofSeconds(30));

        Files.writeString(
                file,
                manifest(function.formatted(tf, "    concurrency: 2\n"))
                        .replace("subscriptions:", ADMIN + "subscriptions:"));
        assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.APPLIED);
        producer.send("f-1");
        await(() -> handledValue("f-1"), Duration.ofSeconds(30));
        await(() -> SettleProcess.status(settle.httpPort(), "/readyz") == 200, Duration.ofSeconds(30));
        assertThat(handled())
                .as("the old instance closed once, the new one handling")
                .extracting(Handled::value)
                .containsExactly("f-0", "closed", "f-1");
    }

    /**
     * Issue 41, item 7, with {@code admin:} on: a swap whose new code cannot open leaves the running generation
     * handling, the reload reported as failed, and the cause in the subscription's status (what {@code settle status}
     * prints) until a reload applies it.
     */
    @Test
    void withTheAdminApiAFailedReloadIsShownInTheStatusUntilTheNextReloadApplies() throws Exception {
        recorder("one.jar", "one");
        Path broken = Files.createFile(folder.resolve("two-broken"));
        openable("two.jar", "two", broken);
        Files.writeString(folder.resolve("token.txt"), "a-token-for-the-test-of-32-characters\n");
        String topic = topic("status");
        Path file = folder.resolve("settle.yaml");
        Files.writeString(
                file,
                manifest(subscription("live", topic, "one.jar", ""))
                        .replace("subscriptions:", ADMIN + "subscriptions:"));
        Settle settle = Settle.start(Preflight.check(file, System.getenv()), Duration.ofSeconds(5));
        pulsar.closeAfterTest(() -> settle.deployment().close());
        pulsar.closeAfterTest(settle);
        var live = settle.live().orElseThrow();

        Files.writeString(
                file,
                manifest(subscription("live", topic, "two.jar", ""))
                        .replace("subscriptions:", ADMIN + "subscriptions:"));
        assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.FAILED);
        assertThat(live.status("live").orElseThrow().reload())
                .hasValueSatisfying(cause -> assertThat(cause).contains("two cannot open while"));
        producer(topic).send("during");
        await(() -> handledValue("during"), Duration.ofSeconds(30));

        Files.delete(broken);
        assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.APPLIED);
        assertThat(live.status("live").orElseThrow().reload()).isEmpty();
        producer(topic).send("after");
        await(() -> handledValue("after"), Duration.ofSeconds(30));
        assertThat(handled()).extracting(Handled::label).containsExactly("one", "two");
    }

    /**
     * Issue 41, item 10: the code a reload retires (restarted handlers and functions, and the unchanged subscriptions'
     * copies each reload loads and never runs) is collectable once the reload is done: after five reloads, only the
     * three running instances' loaders are left. Failed before: every reload's deployment held them until shutdown.
     */
    @Test
    void theLoadersOfRetiredAndUnusedCodeAreCollectableAfterReloads() throws Exception {
        Path never = folder.resolve("never");
        openable("h.jar", "h", never);
        openable("u.jar", "u", never);
        tagger("f.jar", "f");
        String th = topic("h"), tu = topic("u"), tf = topic("f");
        String function = """
                  - name: f
                    topics: [%s]
                    function: test.Tagger
                    jar: f.jar
                    concurrency: %d
                """;
        Path file = folder.resolve("settle.yaml");
        Files.writeString(
                file,
                manifest(
                        subscription("h", th, "h.jar", "concurrency: 1"),
                        subscription("u", tu, "u.jar", ""),
                        function.formatted(tf, 1)));
        Settle settle = Settle.start(Preflight.check(file, System.getenv()), Duration.ofSeconds(5));
        pulsar.closeAfterTest(() -> settle.deployment().close());
        pulsar.closeAfterTest(settle);
        int reloads = 5;
        for (int i = 2; i < 2 + reloads; i++) {
            Files.writeString(
                    file,
                    manifest(
                            subscription("h", th, "h.jar", "concurrency: " + i),
                            subscription("u", tu, "u.jar", ""),
                            function.formatted(tf, i)));
            assertThat(settle.reload(file, System.getenv())).isEqualTo(ReloadResult.APPLIED);
        }
        producer(th).send("h-1");
        producer(tf).send("f-1");
        await(() -> handledValue("h-1") && handledValue("f-1"), Duration.ofSeconds(30));
        assertThat(loaders()).as("constructed: 3 at start, 3 a reload").hasSize(3 + 3 * reloads);
        // As the retired-loader check does: ask for collections until only the running three are left (a collection
        // clears weak references at once; the pause between two looks lets a driver's threads finish ending).
        Waits.until(
                "only the running three loaders reachable, collecting",
                Duration.ofSeconds(30),
                () -> {
                    System.gc();
                    return loaders().stream()
                            .map(ref -> ref.get())
                            .filter(java.util.Objects::nonNull)
                            .toList();
                },
                reachable -> reachable.size() <= 3);
    }

    private String consumer(String topic, String subscription) {
        try {
            return consumerOf(topic, subscription);
        } catch (Exception e) {
            return null;
        }
    }

    @Test
    void settleRunReloadsOnAConfigMapSymlinkSwapAndOnSighup() throws Exception {
        recorder("one.jar", "one");
        recorder("two.jar", "two");
        Path handlerJar = folder.resolve("handler.jar");
        Files.copy(folder.resolve("one.jar"), handlerJar);
        String ta = topic("watched"), tb = topic("steady");
        int port = SettleProcess.freePort();
        // As Kubernetes mounts a ConfigMap: settle.yaml -> ..data/settle.yaml, ..data -> ..<timestamp>/.
        String v1 = manifest(
                        subscription(
                                "watched", ta, folder.resolve("handler.jar").toString(), ""),
                        subscription("steady", tb, folder.resolve("one.jar").toString(), ""))
                .replace("port: 0", "port: " + port);
        Path mount = folder.resolve("config");
        Files.createDirectories(mount.resolve("..v1"));
        Files.writeString(mount.resolve("..v1/settle.yaml"), v1);
        Files.createSymbolicLink(mount.resolve("..data"), Path.of("..v1"));
        Files.createSymbolicLink(mount.resolve("settle.yaml"), Path.of("..data/settle.yaml"));

        // SIGHUP at its default: a build started under nohup would hand its children SIGHUP ignored.
        try (SettleProcess settle =
                SettleProcess.run(mount.resolve("settle.yaml"), "settle reload", SIGHUP_AT_ITS_DEFAULT)) {
            Producer<String> watched = producer(ta);
            Producer<String> steady = producer(tb);
            watched.send("w-0");
            await(() -> handledValue("w-0"), Duration.ofSeconds(60));
            await(() -> consumer(tb, "steady") != null, Duration.ofSeconds(30));
            String steadyConsumer = consumerOf(tb, "steady");

            // The ConfigMap changes: a new folder, and ..data swapped to it in one rename.
            Files.createDirectories(mount.resolve("..v2"));
            Files.writeString(
                    mount.resolve("..v2/settle.yaml"),
                    v1.replace(
                            folder.resolve("handler.jar").toString(),
                            folder.resolve("two.jar").toString()));
            Files.createSymbolicLink(mount.resolve("..data_tmp"), Path.of("..v2"));
            long swapped = System.nanoTime();
            Files.move(mount.resolve("..data_tmp"), mount.resolve("..data"), StandardCopyOption.ATOMIC_MOVE);
            int[] sentAfterSwap = {0};
            Waits.until(
                    "the swap picked up (sending to the watched subscription meanwhile)",
                    Duration.ofSeconds(30),
                    () -> {
                        watched.send("w-swap-" + ++sentAfterSwap[0]);
                        return handled().stream().anyMatch(h -> h.label().equals("two"));
                    },
                    done -> done);
            long picked = System.nanoTime();
            System.out.printf("ConfigMap symlink swap to the new code handling: %.0f ms%n", (picked - swapped) / 1e6);
            assertThat(settle.output)
                    .anyMatch(line -> line.contains("manifest") && line.contains("changed: reloading"));

            // SIGHUP: the same manifest, its JAR rebuilt in place (back to 'one' at two.jar's path).
            Files.copy(folder.resolve("one.jar"), folder.resolve("two.jar"), StandardCopyOption.REPLACE_EXISTING);
            long hup = System.nanoTime();
            new ProcessBuilder("kill", "-HUP", Long.toString(settle.process.pid()))
                    .inheritIO()
                    .start()
                    .waitFor();
            Waits.until(
                    "SIGHUP picked up (sending to the watched subscription meanwhile)",
                    Duration.ofSeconds(30),
                    () -> {
                        watched.send("w-hup-" + System.nanoTime());
                        return lastLabelIs("one");
                    },
                    done -> done);
            System.out.printf("SIGHUP to the rebuilt JAR handling: %.0f ms%n", (System.nanoTime() - hup) / 1e6);
            assertThat(settle.output).anyMatch(line -> line.contains("SIGHUP received"));
            assertThat(consumerOf(tb, "steady"))
                    .as("the unchanged subscription")
                    .isEqualTo(steadyConsumer);
            assertThat(handled()).as("nothing redelivered").allMatch(h -> h.attempt() == 1);
            Map<String, Long> perValue =
                    handled().stream().collect(Collectors.groupingBy(Handled::value, Collectors.counting()));
            assertThat(perValue.values()).as("each message handled once").containsOnly(1L);
            steady.send("s-1");
            await(() -> handledValue("s-1"), Duration.ofSeconds(30));
            String metrics = SettleProcess.body(port, "/metrics");
            assertThat(metrics).contains("settle_manifest_reloads_total{result=\"applied\"} 2.0");
            settle.sigterm();
            assertThat(settle.exitsWithin(30)).isTrue();
            assertThat(settle.process.exitValue()).isZero();
        }
    }

    /**
     * A process started with SIGHUP ignored keeps it so, and the JVM then installs no handler for it: the runtime says
     * a SIGHUP will not reload, rather than ignoring one in silence. Fails without the check (no such line).
     */
    @Test
    void settleRunStartedUnderNohupSaysASighupDoesNotReload() throws Exception {
        recorder("one.jar", "one");
        Path manifest = folder.resolve("nohup.yaml");
        Files.writeString(
                manifest,
                manifest(subscription(
                        "nohup", topic("nohup"), folder.resolve("one.jar").toString(), "")));
        try (SettleProcess settle = SettleProcess.run(manifest, "settle nohup", List.of("nohup"))) {
            await(
                    () -> settle.output.stream().anyMatch(line -> line.contains("settle running")),
                    Duration.ofSeconds(60));
            assertThat(settle.output)
                    .anyMatch(line -> line.contains("SIGHUP is ignored in this process")
                            && line.contains("a change of its content still does"));
            new ProcessBuilder("kill", "-HUP", Long.toString(settle.process.pid()))
                    .inheritIO()
                    .start()
                    .waitFor();
            settle.sigterm();
            assertThat(settle.exitsWithin(30))
                    .as("still running after the SIGHUP, stopped by SIGTERM")
                    .isTrue();
            assertThat(settle.process.exitValue()).isZero();
            assertThat(settle.output).noneMatch(line -> line.contains("SIGHUP received"));
        }
    }

    private boolean lastLabelIs(String label) throws IOException {
        List<Handled> all = handled();
        return !all.isEmpty() && all.get(all.size() - 1).label().equals(label);
    }
}
