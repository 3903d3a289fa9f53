package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.settle.runtime.Settle;
import dev.settle.runtime.StallReport;
import dev.settle.runtime.cli.Main;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.Waits;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Handler JARs uploaded to a running Settle through the admin API, against a real broker: every refusal leaves the
 * running generation handling messages, a swap under load loses nothing and hands each message to one generation,
 * and rollbacks and restarts run what they should. That retired class loaders are collected is
 * {@link LiveCodeMetaspaceIT}'s.
 */
class LiveCodeIT extends LiveCodeHarness {

    @Test
    void everyRefusedUploadNamesItsProblemsAndLeavesTheRunningGenerationHandling() throws Exception {
        String topic = topic("refusals");
        recorder("manifest.jar", "M");
        Path good = recorder("good.jar", "A");
        Settle settle = start(manifest(topic, "maxJarSize: 64KiB", 1));
        try (Producer<String> producer = producer(topic)) {
            assertThat(handledBy(producer, "before")).isEqualTo("M");

            assertThat(request(settle, "GET", "/v1/subscriptions", null, null).statusCode())
                    .isEqualTo(401);
            assertThat(deploy(settle, bytes(good)).statusCode()).isEqualTo(200);
            assertThat(handledBy(producer, "after-good")).isEqualTo("A");
            HttpResponse<String> wrong = request(settle, "PUT", "/v1/subscriptions/live/jar", bytes(good), "wrong");
            assertThat(wrong.statusCode()).isEqualTo(401);
            assertThat(wrong.body()).contains("bearer token");
            assertThat(request(settle, "PUT", "/v1/subscriptions/live/jar", bytes(good), null)
                            .statusCode())
                    .isEqualTo(401);
            HttpResponse<String> tooLarge = deploy(settle, new byte[64 * 1024 + 1]);
            assertThat(tooLarge.statusCode()).isEqualTo(413);
            assertThat(tooLarge.body()).contains("maxJarSize (65536 bytes)");
            assertThat(handledBy(producer, "after-401-413")).isEqualTo("A");

            Map<String, byte[]> refused = new java.util.LinkedHashMap<>();
            refused.put(
                    "the uploaded file is not a JAR: it cannot be read as a zip archive; upload the JAR your build"
                            + " produces (target/<name>.jar after mvn package)",
                    "this is not a zip".getBytes(StandardCharsets.UTF_8));
            refused.put("'../evil'", withEntry(good, "../evil"));
            refused.put("'/etc/evil'", withEntry(good, "/etc/evil"));
            refused.put(
                    "declares no handler in META-INF/services/dev.settle.sdk.Handler",
                    bytes(TestJar.at(folder.resolve("no-services.jar"))
                            .resource("README", "no services file")
                            .build()));
            refused.put(
                    "but has no class test.Missing",
                    bytes(TestJar.at(folder.resolve("missing.jar"))
                            .services("test.Missing")
                            .build()));
            refused.put(
                    "failed in its constructor",
                    bytes(recorder(
                            "throws-in-constructor.jar", "X", "", "throw new IllegalStateException(\"ctor\");")));
            refused.put(
                    "failed to open for subscription live",
                    bytes(recorder("throws-in-open.jar", "X", "throw new IllegalStateException(\"open\");", "")));
            refused.put(
                    "but subscription 'live' consumes AUTO_CONSUME",
                    bytes(TestJar.at(folder.resolve("bytes.jar"))
                            .source("test.Bytes", """
                                    package test;
                                    import dev.settle.sdk.*;
                                    public class Bytes implements Handler<byte[]> {
                                        @Override public Outcome handle(Delivery<byte[]> d) { return Outcome.ack(); }
                                    }
                                    """)
                            .services("test.Bytes")
                            .build()));
            int i = 0;
            for (Map.Entry<String, byte[]> upload : refused.entrySet()) {
                HttpResponse<String> answer = deploy(settle, upload.getValue());
                assertThat(answer.statusCode())
                        .as(upload.getKey() + ": " + answer.body())
                        .isEqualTo(400);
                assertThat(answer.body())
                        .as(upload.getKey())
                        .contains("\"problems\":[")
                        .contains(upload.getKey())
                        // The sender can neither see Settle's data folder nor change its manifest.
                        .doesNotContain("point the manifest's jar")
                        .doesNotContain("data/subscriptions");
                assertThat(handledBy(producer, "after-refusal-" + i++))
                        .as("after " + upload.getKey())
                        .isEqualTo("A");
            }
            String status = request(settle, "GET", "/v1/subscriptions/live", null, TOKEN)
                    .body();
            assertThat(field(status, "generation")).isEqualTo("2");
            // 401s and 413s are not swaps; eight 400s are.
            String metrics = scrape(settle);
            assertThat(metrics).contains("settle_swaps_total{result=\"refused\",subscription=\"live\"} 8.0");
            assertThat(metrics).contains("settle_swaps_total{result=\"deployed\",subscription=\"live\"} 1.0");
        }
    }

    @Test
    void aSwapUnderLoadLosesNothingAndEachMessageIsHandledByOneGeneration() throws Exception {
        String topic = topic("load");
        recorder("manifest.jar", "M");
        byte[] a = bytes(recorder("a.jar", "A"));
        byte[] b = bytes(recorder("b.jar", "B"));
        Settle settle = start(manifest(topic, "", 4));
        int rate = 500;
        int seconds = 10;
        int total = rate * seconds;
        List<Double> pauses = new ArrayList<>();
        try (Producer<String> producer = producer(topic)) {
            Thread sender = new Thread(() -> {
                long started = System.nanoTime();
                for (int i = 0; i < total; i++) {
                    long due = started + TimeUnit.SECONDS.toNanos(1) * i / rate;
                    long ahead = due - System.nanoTime();
                    if (ahead > 0) {
                        try {
                            // Not a spin: on two cores a spinning sender took one from the build's other classes.
                            Waits.pause(Duration.ofNanos(ahead), "the sender's pace, 500 a second");
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    producer.sendAsync("slow-" + i);
                }
                producer.flushAsync().join();
            });
            sender.start();
            for (int swap = 0; swap < 10; swap++) {
                Waits.pause(Duration.ofMillis(900), "ten swaps spread over the ten seconds of sending");
                HttpResponse<String> answer = deploy(settle, swap % 2 == 0 ? a : b);
                assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
                pauses.add(Double.parseDouble(field(answer.body(), "swapMillis")));
            }
            sender.join();
            // Not all handled in time, the failure says where each driver stands (its permits, receive thread, calls
            // running and consumer counts): a stall seen once on a loaded machine, 369 of 5 000 never handled.
            await(
                    () -> handled.stream().map(Handled::value).distinct().count() == total,
                    Duration.ofSeconds(60),
                    () -> handled.stream().map(Handled::value).distinct().count() + " of " + total + " handled; "
                            + StallReport.of(pulsar.endpoints(), topic, running));
            Waits.pause(Duration.ofSeconds(1), "time for a repeated call to show before the calls are counted");
        }
        PulsarAdmin admin = pulsar.admin();
        // The broker's own count: every message acknowledged, and each dispatched exactly once (a message
        // acknowledged and then delivered again would count twice, even though the driver never hands a
        // repeat to the handler).
        await(
                () -> {
                    try {
                        return admin.topics()
                                        .getStats(topic)
                                        .getSubscriptions()
                                        .get("live")
                                        .getMsgBacklog()
                                == 0;
                    } catch (Exception e) {
                        return false;
                    }
                },
                Duration.ofSeconds(20));
        long dispatched = admin.topics().getStats(topic).getSubscriptions().get("live").getConsumers().stream()
                .mapToLong(consumer -> consumer.getMsgOutCounter())
                .sum();
        assertThat(dispatched).isEqualTo(total);
        Map<String, List<Handled>> byValue = handled.stream().collect(Collectors.groupingBy(Handled::value));
        assertThat(byValue).hasSize(total);
        // No message acknowledged by one generation came back to another (or to the same one).
        assertThat(byValue.values().stream().filter(calls -> calls.size() != 1).toList())
                .isEmpty();
        Map<String, Long> perLabel =
                handled.stream().collect(Collectors.groupingBy(Handled::label, Collectors.counting()));
        assertThat(perLabel.keySet()).containsExactlyInAnyOrder("M", "A", "B");
        List<Double> sorted = pauses.stream().sorted().toList();
        System.out.printf(
                "swap under load: %d messages at %d/s over %d s, 10 swaps; handled per generation label %s;"
                        + " swap pause p50 %.3f ms, max %.3f ms (all %s)%n",
                total, rate, seconds, perLabel, sorted.get(sorted.size() / 2), sorted.get(sorted.size() - 1), pauses);
        assertThat(field(
                        request(settle, "GET", "/v1/subscriptions/live", null, TOKEN)
                                .body(),
                        "generation"))
                .isEqualTo("11");
    }

    @Test
    void aRetryAfterHeldAcrossASwapIsHandledByTheNewGeneration() throws Exception {
        String topic = topic("held");
        recorder("manifest.jar", "M");
        // Built before the first call, so that the swap follows the twentieth first call at once.
        byte[] next = bytes(recorder("a.jar", "A"));
        Settle settle = start(manifest(topic, "", 2));
        try (Producer<String> producer = producer(topic)) {
            for (int i = 0; i < 20; i++) {
                producer.send("wait-" + i);
            }
            await(() -> handled.size() >= 20, Duration.ofSeconds(20));
            long swapping = System.nanoTime();
            assertThat(deploy(settle, next).statusCode()).isEqualTo(200);
            System.out.printf(
                    "held across a swap: the swap took %d ms after the twentieth first call (the holds: 6 s)%n",
                    (System.nanoTime() - swapping) / 1_000_000);
            await(() -> handled.size() >= 40, Duration.ofSeconds(20));
        }
        assertThat(handled).hasSize(40);
        for (int i = 0; i < 20; i++) {
            assertThat(of("wait-" + i))
                    .extracting(Handled::label, Handled::attempt)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple("M", 1), org.assertj.core.groups.Tuple.tuple("A", 2));
        }
    }

    @Test
    void theSha256FollowsTheCodeAndARollbackRestoresThePreviousGeneration() throws Exception {
        String topic = topic("rollback");
        Path manifestJar = recorder("manifest.jar", "M");
        Settle settle = start(manifest(topic, "", 1));
        String manifestSha = JarDigest.of(manifestJar);
        try (Producer<String> producer = producer(topic)) {
            HttpResponse<String> toA = deploy(settle, bytes(recorder("a.jar", "A")));
            HttpResponse<String> toB = deploy(settle, bytes(recorder("b.jar", "B")));
            String shaA = field(toA.body(), "sha256");
            String shaB = field(toB.body(), "sha256");
            assertThat(field(toA.body(), "previousSha256")).isEqualTo(manifestSha);
            assertThat(shaA).isNotEqualTo(manifestSha).isEqualTo(JarDigest.of(folder.resolve("a.jar")));
            assertThat(shaB).isNotEqualTo(shaA);
            assertThat(field(toB.body(), "previousSha256")).isEqualTo(shaA);
            assertThat(field(
                            request(settle, "GET", "/v1/subscriptions/live", null, TOKEN)
                                    .body(),
                            "sha256"))
                    .isEqualTo(shaB);
            assertThat(handledBy(producer, "on-b")).isEqualTo("B");

            HttpResponse<String> back = request(settle, "POST", "/v1/subscriptions/live/rollback", null, TOKEN);
            assertThat(back.statusCode()).as(back.body()).isEqualTo(200);
            assertThat(field(back.body(), "sha256")).isEqualTo(shaA);
            assertThat(field(back.body(), "generation")).isEqualTo("2");
            assertThat(field(
                            request(settle, "GET", "/v1/subscriptions/live", null, TOKEN)
                                    .body(),
                            "sha256"))
                    .isEqualTo(shaA);
            assertThat(handledBy(producer, "rolled-back")).isEqualTo("A");
            assertThat(scrape(settle))
                    .contains("settle_handler_info{generation=\"2\",handler=\"test.Recorder\",sha256=\"" + shaA
                            + "\",subscription=\"live\"} 1.0")
                    .doesNotContain("sha256=\"" + shaB + "\"");

            HttpResponse<String> again = request(settle, "POST", "/v1/subscriptions/live/rollback", null, TOKEN);
            assertThat(field(again.body(), "sha256")).isEqualTo(manifestSha);
            HttpResponse<String> none = request(settle, "POST", "/v1/subscriptions/live/rollback", null, TOKEN);
            assertThat(none.statusCode()).isEqualTo(409);
            assertThat(none.body()).contains("no generation older than the running one (1)");
            assertThat(handledBy(producer, "on-manifest-again")).isEqualTo("M");
        }
    }

    @Test
    void aSwapTouchesItsOwnSubscriptionOnlyAndWithoutAdminThereIsNoAdminApi() throws Exception {
        String first = topic("first");
        String second = topic("second");
        recorder("manifest.jar", "M");
        Path file = manifest(first, "", 1);
        Files.writeString(file, Files.readString(file) + """
                          - name: other
                            topics: [%s]
                            jar: manifest.jar
                        """.formatted(second));
        Settle settle = start(file);
        assertThat(deploy(settle, bytes(recorder("a.jar", "A"))).statusCode()).isEqualTo(200);
        try (Producer<String> toFirst = producer(first);
                Producer<String> toSecond = producer(second)) {
            assertThat(handledBy(toFirst, "first-after")).isEqualTo("A");
            assertThat(handledBy(toSecond, "second-after")).isEqualTo("M");
        }
        String other =
                request(settle, "GET", "/v1/subscriptions/other", null, TOKEN).body();
        assertThat(field(other, "generation")).isEqualTo("1");
        assertThat(request(settle, "GET", "/v1/subscriptions/nope", null, TOKEN).statusCode())
                .isEqualTo(404);
        assertThat(request(settle, "PUT", "/v1/subscriptions/nope/jar", new byte[] {1}, TOKEN)
                        .statusCode())
                .isEqualTo(404);
        assertThat(request(settle, "GET", "/v1/subscriptions/live/jar", null, TOKEN)
                        .statusCode())
                .isEqualTo(405);
        stop(settle);

        Path plain = folder.resolve("plain.yaml");
        Files.writeString(plain, """
                pulsar:
                  serviceUrl: %s
                http:
                  port: 0
                subscriptions:
                  - name: live
                    topics: [%s]
                    jar: manifest.jar
                """.formatted(pulsar.endpoints().serviceUrl(), first));
        Settle withoutAdmin = Settle.start(Preflight.check(plain, System.getenv()), Duration.ofSeconds(5));
        running.add(withoutAdmin);
        assertThat(withoutAdmin.adminPort()).isEmpty();
        assertThat(withoutAdmin.live()).isEmpty();
        assertThat(scrape(withoutAdmin)).doesNotContain("settle_handler_info");
    }

    @Test
    void aBodyWithoutALengthIsCutOffAtTheLimit() throws Exception {
        String topic = topic("chunked");
        recorder("manifest.jar", "M");
        Settle settle = start(manifest(topic, "maxJarSize: 64KiB", 1));
        // A publisher of unknown length: sent chunked, so only the bytes received can tell.
        HttpRequest request = HttpRequest.newBuilder(URI.create(
                        "http://127.0.0.1:" + settle.adminPort().orElseThrow() + "/v1/subscriptions/live/jar"))
                .header("Authorization", "Bearer " + TOKEN)
                .PUT(HttpRequest.BodyPublishers.ofInputStream(
                        () -> new java.io.ByteArrayInputStream(new byte[200 * 1024])))
                .build();
        HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).isEqualTo(413);
        try (java.util.stream.Stream<Path> files =
                Files.walk(folder.resolve("data").resolve("subscriptions").resolve("live"))) {
            assertThat(files.map(path -> path.getFileName().toString()))
                    .as("nothing of the body is kept")
                    .noneMatch(name -> name.endsWith(".jar") || name.endsWith(".part"));
        }
        try (Producer<String> producer = producer(topic)) {
            assertThat(handledBy(producer, "after-chunked")).isEqualTo("M");
        }
    }

    /** A JSON handler of {@code test.Order}, recording the id and whether the value's class is its own loader's. */
    private Path orderHandler(String name, String label) {
        return TestJar.at(folder.resolve(name))
                .source("test.Order", """
                        package test;
                        public class Order { public String id; public int quantity; }
                        """)
                .source("test.OrderHandler", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.util.function.BiConsumer;
                        public class OrderHandler implements Handler<Order> {
                            @SuppressWarnings("unchecked")
                            private final BiConsumer<String, String> sink =
                                    (BiConsumer<String, String>) System.getProperties().get("%s");
                            @Override public Outcome handle(Delivery<Order> delivery) {
                                boolean own = delivery.value().getClass() == Order.class;
                                sink.accept(delivery.value().id + "/" + delivery.value().quantity,
                                        "%s-" + (own ? "own" : "foreign") + "|" + delivery.attempt());
                                return Outcome.ack();
                            }
                        }
                        """.formatted(sinkProperty, label))
                .services("test.OrderHandler")
                .build();
    }

    @Test
    void aJsonHandlerSwappedInGetsInstancesOfItsOwnClasses() throws Exception {
        String topic = topic("json");
        orderHandler("manifest.jar", "M");
        Settle settle = start(manifest(topic, "", 1));
        try (Producer<byte[]> producer = pulsar.client()
                .newProducer(Schema.BYTES)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            producer.send("{\"id\":\"o-1\",\"quantity\":2}".getBytes(StandardCharsets.UTF_8));
            await(() -> !of("o-1/2").isEmpty(), Duration.ofSeconds(20));
            assertThat(deploy(settle, bytes(orderHandler("a.jar", "A"))).statusCode())
                    .isEqualTo(200);
            producer.send("{\"id\":\"o-2\",\"quantity\":3}".getBytes(StandardCharsets.UTF_8));
            await(() -> !of("o-2/3").isEmpty(), Duration.ofSeconds(20));
        }
        assertThat(of("o-1/2")).extracting(Handled::label).containsExactly("M-own");
        // Decoded by the new generation's own schema: an Order of its own loader, not the consumer's first one.
        assertThat(of("o-2/3")).extracting(Handled::label).containsExactly("A-own");
    }

    /** {@code settle deploy|rollback|status}: exit code, stdout, stderr. */
    private record Cli(int exitCode, String out, String err) {}

    private Cli settle(Settle settle, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        List<String> line = new ArrayList<>(List.of(args));
        line.addAll(List.of(
                "--admin",
                "http://127.0.0.1:" + settle.adminPort().orElseThrow(),
                "--token-file",
                folder.resolve("token.txt").toString()));
        int code = Main.execute(
                line,
                new java.io.PrintStream(out, true, StandardCharsets.UTF_8),
                new java.io.PrintStream(err, true, StandardCharsets.UTF_8));
        return new Cli(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void settleDeployRollbackAndStatusPrintTheGenerationAndExitNonZeroOnARefusal() throws Exception {
        String topic = topic("cli");
        recorder("manifest.jar", "M");
        Path a = recorder("a.jar", "A");
        Settle settle = start(manifest(topic, "", 1));

        Cli deployed = settle(settle, "deploy", a.toString(), "--subscription", "live");
        assertThat(deployed.exitCode()).as(deployed.err()).isZero();
        assertThat(deployed.out())
                .startsWith("subscription 'live': deployed generation 2, sha256 " + JarDigest.of(a)
                        + ", handler test.Recorder");

        Cli status = settle(settle, "status");
        assertThat(status.exitCode()).isZero();
        assertThat(status.out())
                .contains("subscription 'live': generation 2, sha256 " + JarDigest.of(a))
                .contains("  kept: generation 1, sha256 " + JarDigest.of(folder.resolve("manifest.jar")));
        // The token it was given is never printed back (issue 48: status, like /config/effective, shows no credential).
        String token = Files.readString(folder.resolve("token.txt")).strip();
        assertThat(status.out() + status.err()).doesNotContain(token);
        Cli settings = settle(settle, "status", "--settings");
        assertThat(settings.exitCode()).as(settings.err()).isZero();
        assertThat(settings.out())
                .contains("subscription 'live': settings in force")
                .contains("receiverQueueSize=1000")
                .contains("  as the manifest says")
                .contains("client: serviceUrl=")
                .doesNotContain(token);
        assertThat(settle(settle, "status", "--settings", "--subscription", "nope")
                        .exitCode())
                .isEqualTo(2);

        Files.writeString(folder.resolve("junk.jar"), "not a jar");
        Cli refused = settle(settle, "deploy", folder.resolve("junk.jar").toString(), "--subscription", "live");
        assertThat(refused.exitCode()).isEqualTo(2);
        assertThat(refused.err()).contains("refused (400)").contains("cannot be read as a zip archive");

        Cli back = settle(settle, "rollback", "--subscription", "live");
        assertThat(back.exitCode()).as(back.err()).isZero();
        assertThat(back.out()).startsWith("subscription 'live': rolled back to generation 1");
        Cli none = settle(settle, "rollback", "--subscription", "live");
        assertThat(none.exitCode()).isEqualTo(2);
        assertThat(none.err()).contains("refused (409)");

        Files.writeString(folder.resolve("token.txt"), "wrong-token");
        Cli unauthorized = settle(settle, "status");
        assertThat(unauthorized.exitCode()).isEqualTo(1);
        assertThat(unauthorized.err()).contains("refused the token");
    }

    @Test
    void aRestartRunsTheUploadedGenerationUnlessTheManifestsJarChanged() throws Exception {
        String topic = topic("restart");
        recorder("manifest.jar", "M");
        Path manifest = manifest(topic, "", 1);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        // Which generation runs first is decided, and logged, by FirstGeneration.
        Logger startLog = (Logger) LoggerFactory.getLogger(FirstGeneration.class);
        startLog.addAppender(logged);
        Settle first = start(manifest);
        String shaA = field(deploy(first, bytes(recorder("a.jar", "A"))).body(), "sha256");
        stop(first);

        Settle second = start(manifest);
        String status =
                request(second, "GET", "/v1/subscriptions/live", null, TOKEN).body();
        assertThat(field(status, "sha256")).isEqualTo(shaA);
        assertThat(field(status, "source")).isEqualTo("upload");
        try (Producer<String> producer = producer(topic)) {
            assertThat(handledBy(producer, "after-restart")).isEqualTo("A");
        }
        stop(second);

        Path changed = recorder("manifest.jar", "M2");
        Settle third = start(manifest);
        String after =
                request(third, "GET", "/v1/subscriptions/live", null, TOKEN).body();
        assertThat(field(after, "sha256")).isEqualTo(JarDigest.of(changed));
        assertThat(field(after, "source")).isEqualTo("manifest");
        assertThat(field(after, "generation")).isEqualTo("3");
        try (Producer<String> producer = producer(topic)) {
            assertThat(handledBy(producer, "after-manifest-changed")).isEqualTo("M2");
        }
        startLog.detachAppender(logged);
        assertThat(logged.list.stream().map(ILoggingEvent::getFormattedMessage))
                .anyMatch(line -> line.contains("no kept generations") && line.contains("as generation 1"))
                .anyMatch(line -> line.contains("restoring uploaded generation 2 (sha256 " + shaA)
                        && line.contains("the manifest's jar is unchanged since it was uploaded"))
                .anyMatch(line -> line.contains("changed since generation 2 was made active: the manifest wins,"
                        + " running it as generation 3"));
    }
}
