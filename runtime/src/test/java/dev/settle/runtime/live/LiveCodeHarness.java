package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.Settle;
import dev.settle.runtime.StallReport;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.HandlerWork;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.Manifest;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.Waits;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the live-code tests share: a folder with the admin token, the shared broker, handler JARs that report each call
 * to {@link #handled}, and a Settle started in this JVM on a manifest with the admin API on. {@link LiveCodeIT} holds
 * the tests that run beside the build's other classes, {@link LiveCodeMetaspaceIT} the one that measures the JVM's
 * metaspace and runs alone.
 */
abstract class LiveCodeHarness {
    static final String TOKEN = "admin-token-for-the-test-of-32-characters";
    /**
     * The system property the handlers read their sink from: one per test instance. The IT classes run concurrently
     * in one JVM (failsafe's JUnit parallelism), so a name they shared let one class's setUp replace another's sink and
     * its tearDown remove it: a generation swapped in meanwhile reported its calls to the other class, or had no sink
     * and failed each call (LiveCodeIT's swap under load saw 0 of 5 000 beside HoldForFixIT, all 5 000 acknowledged).
     */
    final String sinkProperty = "settle.test.live.sink." + UUID.randomUUID();

    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    final HttpClient http = HttpClient.newHttpClient();
    /** Every handler call: value, the label of the code that handled it, attempt. */
    final Collection<Handled> handled = new ConcurrentLinkedQueue<>();

    final List<Settle> running = new ArrayList<>();

    record Handled(String value, String label, int attempt) {}

    @BeforeEach
    void setUp() throws Exception {
        // A JDK type, so that handlers in their own class loaders can call it.
        BiConsumer<String, String> sink = (value, labelAndAttempt) -> {
            int bar = labelAndAttempt.indexOf('|');
            handled.add(new Handled(
                    value, labelAndAttempt.substring(0, bar), Integer.parseInt(labelAndAttempt.substring(bar + 1))));
        };
        System.getProperties().put(sinkProperty, sink);
        Files.writeString(folder.resolve("token.txt"), TOKEN + "\n");
    }

    @AfterEach
    void tearDown() throws Exception {
        for (Settle settle : running) {
            settle.close();
            settle.deployment().close();
        }
        System.getProperties().remove(sinkProperty);
    }

    // ---- handler JARs ----

    /**
     * A String handler that records each call under {@code label}; "wait-" values are held once for 6 s: longer than
     * their test takes from a first call to its swap, which was over 1.5 s on a loaded 2-core machine (a full build
     * beside other builds, load 20), when the held retries came back to the old generation before the swap.
     */
    Path recorder(String name, String label) {
        return recorder(name, label, "", "");
    }

    Path recorder(String name, String label, String openBody, String constructorBody) {
        return TestJar.at(folder.resolve(name))
                .source("test.Recorder", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.time.Duration;
                        import java.util.function.BiConsumer;
                        public class Recorder implements Handler<String> {
                            @SuppressWarnings("unchecked")
                            private final BiConsumer<String, String> sink =
                                    (BiConsumer<String, String>) System.getProperties().get("%s");
                            public Recorder() { %s }
                            @Override public void open(HandlerContext context) throws Exception { %s }
                            @Override public Outcome handle(Delivery<String> delivery) throws Exception {
                                sink.accept(delivery.value(), "%s|" + delivery.attempt());
                                if (delivery.value().startsWith("wait-") && delivery.attempt() == 1) {
                                    return Outcome.retryAfter(Duration.ofSeconds(6));
                                }
                                if (delivery.value().startsWith("slow-")) {
                                    // Deliberately slow: a swap under load must find calls in flight.
                                    %s
                                }
                                return Outcome.ack();
                            }
                        }
                        """.formatted(
                                sinkProperty, constructorBody, openBody, label, HandlerWork.pause(2)))
                .services("test.Recorder")
                .build();
    }

    /**
     * A String handler labelled {@code label} that publishes {@code <value>|<label>} to {@code output} in each call;
     * then, when {@code failsWhen} (a Java condition on {@code delivery}) holds, it records the call as
     * {@code <label>!} and throws (after the send: an attempt's output is read only if it commits), else it records
     * the call and acknowledges.
     */
    Path publishing(String name, String label, String output, String failsWhen) {
        return TestJar.at(folder.resolve(name))
                .source("test.Publishing", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.util.function.BiConsumer;
                        public class Publishing implements Handler<String> {
                            @SuppressWarnings("unchecked")
                            private final BiConsumer<String, String> sink =
                                    (BiConsumer<String, String>) System.getProperties().get("%s");
                            private Publisher<String> out;
                            @Override public void open(HandlerContext context) {
                                out = context.publisher("%s", String.class);
                            }
                            @Override public Outcome handle(Delivery<String> delivery) {
                                out.publish(delivery, delivery.value() + "|%s");
                                if (%s) {
                                    sink.accept(delivery.value(), "%s!|" + delivery.attempt());
                                    throw new IllegalStateException("%s fails after its send on " + delivery.value());
                                }
                                sink.accept(delivery.value(), "%s|" + delivery.attempt());
                                return Outcome.ack();
                            }
                        }
                        """.formatted(sinkProperty, output, label, failsWhen, label, label, label))
                .services("test.Publishing")
                .build();
    }

    byte[] bytes(Path jar) throws Exception {
        return Files.readAllBytes(jar);
    }

    /** A JAR of the recorder with one more entry named {@code entry}. */
    byte[] withEntry(Path jar, String entry) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (var in = new java.util.jar.JarInputStream(Files.newInputStream(jar));
                JarOutputStream copy = new JarOutputStream(out, in.getManifest())) {
            for (JarEntry next = in.getNextJarEntry(); next != null; next = in.getNextJarEntry()) {
                copy.putNextEntry(new JarEntry(next.getName()));
                in.transferTo(copy);
                copy.closeEntry();
            }
            copy.putNextEntry(new JarEntry(entry));
            copy.write("evil".getBytes(StandardCharsets.UTF_8));
            copy.closeEntry();
        }
        return out.toByteArray();
    }

    // ---- the runtime ----

    String topic(String name) {
        return pulsar.topic("live-" + name);
    }

    /**
     * A manifest on the shared broker with the admin API on (its token in token.txt, its generations in data/) and
     * {@code extraAdmin} added to the {@code admin:} block; its subscriptions are the caller's.
     */
    Manifest liveManifest(String extraAdmin) {
        return pulsar.manifest().section("""
                shutdown:
                  grace: 5s
                admin:
                  port: 0
                  token: {file: token.txt}
                  dataDir: data
                """ + extraAdmin.indent(2));
    }

    /** settle.yaml: {@link #liveManifest} with the subscription "live" on {@code topic}, its jar manifest.jar. */
    Path manifest(String topic, String extraAdmin, int concurrency) {
        return liveManifest(extraAdmin)
                .subscription("live", topic)
                .jar("manifest.jar")
                .set("concurrency", concurrency)
                .writeTo(folder.resolve("settle.yaml"));
    }

    Settle start(Path manifest) throws Exception {
        Settle settle = Settle.start(Preflight.check(manifest, System.getenv()), Duration.ofSeconds(5));
        running.add(settle);
        await(() -> settle.live().isPresent(), Duration.ofSeconds(5));
        // Subscribed before a test produces: a BYTES producer first would leave a JSON consumer refused.
        await(() -> isReady(settle), Duration.ofSeconds(30));
        return settle;
    }

    boolean isReady(Settle settle) {
        try {
            return http.send(
                                    HttpRequest.newBuilder(
                                                    URI.create("http://127.0.0.1:" + settle.httpPort() + "/readyz"))
                                            .build(),
                                    HttpResponse.BodyHandlers.discarding())
                            .statusCode()
                    == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    void stop(Settle settle) {
        settle.close();
        settle.deployment().close();
        running.remove(settle);
    }

    HttpResponse<String> request(Settle settle, String method, String path, byte[] body, String token)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + settle.adminPort().orElseThrow() + path))
                .method(
                        method,
                        body == null
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofByteArray(body));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> deploy(Settle settle, byte[] jar) throws Exception {
        return request(settle, "PUT", "/v1/subscriptions/live/jar", jar, TOKEN);
    }

    String scrape(Settle settle) throws Exception {
        return http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + settle.httpPort() + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    static String field(String json, String name) {
        java.util.regex.Matcher matcher = java.util.regex.Pattern.compile("\"" + name + "\":(\"([^\"]*)\"|(-?[0-9.]+))")
                .matcher(json);
        assertThat(matcher.find()).as(name + " in " + json).isTrue();
        return matcher.group(2) != null ? matcher.group(2) : matcher.group(3);
    }

    Producer<String> producer(String topic) throws Exception {
        return pulsar.client()
                .newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create();
    }

    List<Handled> of(String value) {
        return handled.stream().filter(h -> h.value().equals(value)).toList();
    }

    /**
     * Sends {@code value} and waits until a generation has handled it; returns the label of that generation. Not
     * handled in time, the failure says where it stands ({@link StallReport}: a stall seen once, a swap 64 ms after
     * subscribing and the next message not handled in 20 s).
     */
    String handledBy(Producer<String> producer, String value) throws Exception {
        producer.send(value);
        await(
                () -> !of(value).isEmpty(),
                Duration.ofSeconds(20),
                () -> "'" + value + "' not handled; "
                        + StallReport.of(pulsar.endpoints(), producer.getTopic(), running));
        return of(value).get(0).label();
    }

    void await(Supplier<Boolean> condition, Duration timeout) {
        await(condition, timeout, () -> handled.size() + " handler calls so far");
    }

    /**
     * Waits for {@code condition}, failing after {@code timeout} with what {@code state} says then. Polled: the handlers
     * record their calls in a queue that signals nobody.
     */
    static void await(Supplier<Boolean> condition, Duration timeout, Supplier<String> state) {
        Waits.until("a condition on the handler calls", timeout, condition::get, state::get);
    }
}
