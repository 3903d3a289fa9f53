package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * A canary ramp across a fleet (docs/live-code.md, "Canary ramps"): three {@code settle run} processes on one Key_Shared
 * subscription with {@code admin.codeStore: pulsar}, 200 messages a second over 300 keys. A healthy generation
 * ramped through one runtime goes 5% → 25% → 100% on its schedule on all three, each step written once (by whichever
 * runtime judged it first; the others follow the record); each message is handled once, by one generation, and no key
 * goes back to the old generation after it moved.
 */
// On the shared broker (package management on), as FleetCodeIT. Minutes of child processes: -Preliability.
@Tag("reliability")
@ResourceLock(FleetCodeIT.FLEET_PROCESSES)
class FleetCanaryIT {
    @TempDir
    static Path folder;

    private static final String TOKEN = "0123456789abcdef0123456789abcdef-canary";
    private static final int KEYS = 300;
    /** Messages a second: 4 every 20 ms. */
    private static final int RATE = 200;
    /** The same step shown by all three runtimes within this (measured: printed and documented). */
    private static final Duration SAME_STEP_WITHIN = Duration.ofSeconds(5);

    private static final Pattern CANARY =
            Pattern.compile("\"canary\":\\{\"generation\":(\\d+),\"percent\":(\\d+),.*?\"status\":\"([a-z_]+)\"");

    /** The fleet's subscription: its records share the code namespace with the other fleet tests'. */
    private static final String FLEET = PulsarFixture.unique("fleet-canary");

    @RegisterExtension
    static final PulsarFixture broker = PulsarFixture.shared();

    @BeforeAll
    static void token() throws Exception {
        Files.writeString(folder.resolve("admin-token.txt"), TOKEN + "\n");
    }

    /** A String handler that prints "HANDLED label value attempt". */
    private static Path handler(String label) {
        return TestJar.at(folder.resolve(label + ".jar"))
                .source("test.Stamp", """
                        package test;
                        import dev.settle.sdk.*;
                        public class Stamp implements Handler<String> {
                            @Override public Outcome handle(Delivery<String> delivery) {
                                System.out.println("HANDLED %s " + delivery.value() + " " + delivery.attempt());
                                return Outcome.ack();
                            }
                        }
                        """.formatted(label))
                .services("test.Stamp")
                .build();
    }

    private record Runtime(String name, SettleProcess process, int adminPort) {}

    private static Runtime start(String name, String topic, Path jar) throws Exception {
        int adminPort = SettleProcess.freePort();
        Path manifest = Files.writeString(folder.resolve(name + ".yaml"), """
                pulsar:
                  serviceUrl: %s
                  adminUrl: %s
                  packageCache: %s
                http:
                  port: 0
                admin:
                  port: %d
                  token: {file: admin-token.txt}
                  dataDir: %s
                  codeStore: pulsar
                  codeNamespace: public/default
                subscriptions:
                  - name: %s
                    topics: [%s]
                    type: Key_Shared
                    jar: %s
                """.formatted(
                        broker.endpoints().serviceUrl(),
                        broker.endpoints().adminUrl(),
                        folder.resolve(name + "-cache"),
                        adminPort,
                        folder.resolve(name + "-data"),
                        FLEET,
                        topic,
                        jar));
        SettleProcess process = SettleProcess.run(manifest, name);
        Waits.until(
                name + " answers on its admin port",
                Duration.ofSeconds(60),
                () -> SettleProcess.status(adminPort, "/nothing") == 401
                        || process.lines("") > 0 && !process.process.isAlive(),
                () -> String.join("\n", List.copyOf(process.output)));
        assertThat(process.process.isAlive())
                .as(name + " runs: " + process.output)
                .isTrue();
        return new Runtime(name, process, adminPort);
    }

    private static HttpResponse<String> admin(
            Runtime runtime, String method, String path, HttpRequest.BodyPublisher body) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + runtime.adminPort() + path))
                                .header("Authorization", "Bearer " + TOKEN)
                                .method(method, body)
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    /** The step a runtime shows: "5%", "25%", "promoted", or "-" without a ramp (or when it cannot be asked). */
    private static String step(Runtime runtime) {
        try {
            String body = admin(runtime, "GET", "/v1/subscriptions/" + FLEET, HttpRequest.BodyPublishers.noBody())
                    .body();
            Matcher canary = CANARY.matcher(body);
            if (!canary.find()) {
                return "-";
            }
            return canary.group(3).equals("running") ? canary.group(2) + "%" : canary.group(3);
        } catch (Exception e) {
            return "-";
        }
    }

    @Test
    void aHealthyGenerationGoesFiveTwentyFiveHundredOnEveryRuntimeEachStepWrittenOnce() throws Exception {
        String topic = broker.topic("fleet-canary");
        Path v1 = handler("M");
        Path v2 = handler("H");
        List<Runtime> runtimes = new ArrayList<>();
        ScheduledExecutorService sender = Executors.newSingleThreadScheduledExecutor();
        AtomicInteger sent = new AtomicInteger();
        try (Producer<String> producer = broker.client()
                .newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            for (String name : List.of("a", "b", "c")) {
                runtimes.add(start(name, topic, v1));
            }
            // Every runtime's consumer is on before the first message: Key_Shared then keeps each key on one runtime.
            sender.scheduleAtFixedRate(
                    () -> {
                        for (int i = 0; i < RATE / 50; i++) {
                            int n = sent.getAndIncrement();
                            String key = "key-" + (n % KEYS);
                            producer.newMessage()
                                    .key(key)
                                    .value(key + ":" + (n / KEYS))
                                    .sendAsync();
                        }
                    },
                    0,
                    20,
                    TimeUnit.MILLISECONDS);
            Waits.until(
                    "a second of messages handled",
                    Duration.ofSeconds(60),
                    () -> handled(runtimes).size() >= RATE,
                    () -> handled(runtimes).size() + " handled");

            long started = System.nanoTime();
            // minCalls=20: each runtime judges its own calls, about 3 canary calls a second at 5%, so each step's
            // 10 s is what holds it, on every runtime at once: the runtimes race to write the next step.
            // p99FloorMillis=1000: the p99 of 20-40 calls is their slowest one, and on a loaded 2-core machine one
            // call of the canary just routed to took 78 ms against 0.7 ms and rolled a healthy ramp back. This test
            // is of the schedule across runtimes; the rates are still judged.
            HttpResponse<String> ramp = admin(
                    runtimes.get(0),
                    "POST",
                    "/v1/subscriptions/" + FLEET
                            + "/canary?steps=5,25,100&stepEvery=10s&minCalls=20&p99FloorMillis=1000",
                    HttpRequest.BodyPublishers.ofFile(v2));
            assertThat(ramp.statusCode()).as(ramp.body()).isEqualTo(200);

            // When each runtime first showed each step, in seconds after the ramp started.
            Map<String, Map<String, Double>> seen = new LinkedHashMap<>();
            runtimes.forEach(runtime -> seen.put(runtime.name(), new LinkedHashMap<>()));
            while (!seen.values().stream().allMatch(steps -> steps.containsKey("promoted"))) {
                assertThat(System.nanoTime() - started)
                        .as("promoted on all three within 120 s; steps seen: %s", seen)
                        .isLessThan(TimeUnit.SECONDS.toNanos(120));
                for (Runtime runtime : runtimes) {
                    double at = (System.nanoTime() - started) / 1e9;
                    seen.get(runtime.name()).putIfAbsent(step(runtime), at);
                }
                Waits.pause(Duration.ofMillis(100), "a poll of the status: each step it shows is seconds long");
            }
            System.out.println("FleetCanaryIT: steps seen, seconds after the ramp started: " + seen);
            for (Map<String, Double> steps : seen.values()) {
                assertThat(steps.keySet()).containsSubsequence("5%", "25%", "promoted");
            }
            for (String step : List.of("25%", "promoted")) {
                double first = seen.values().stream()
                        .mapToDouble(s -> s.get(step))
                        .min()
                        .orElseThrow();
                double last = seen.values().stream()
                        .mapToDouble(s -> s.get(step))
                        .max()
                        .orElseThrow();
                System.out.printf("FleetCanaryIT: %s on all three within %.1f s%n", step, last - first);
                assertThat(last - first)
                        .as("%s shown by every runtime within %s: %s", step, SAME_STEP_WITHIN, seen)
                        .isLessThanOrEqualTo(SAME_STEP_WITHIN.toMillis() / 1000.0);
            }

            // Two more seconds of traffic on the promoted generation, then every message is handled.
            int atPromotion = sent.get();
            Waits.until(
                    "two seconds of messages after the promotion",
                    Duration.ofSeconds(60),
                    () -> sent.get() > atPromotion + 2 * RATE,
                    () -> sent.get() + " sent");
            sender.shutdown();
            assertThat(sender.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
            producer.flush();
            int total = sent.get();
            Waits.until(
                    "every message handled",
                    Duration.ofSeconds(60),
                    () -> handled(runtimes).size() >= total,
                    () -> handled(runtimes).size() + " of " + total + " handled");
            Waits.pause(Duration.ofSeconds(1), "time for a repeated call to show before the calls are counted");

            List<String[]> lines = handled(runtimes);
            Map<String, List<String>> byValue = new HashMap<>();
            for (String[] line : lines) {
                byValue.computeIfAbsent(line[1], value -> new ArrayList<>()).add(line[0] + " attempt " + line[2]);
            }
            assertThat(byValue).as("nothing lost").hasSize(total);
            assertThat(byValue.entrySet().stream()
                            .filter(e -> e.getValue().size() != 1)
                            .toList())
                    .as("handled once, by one generation")
                    .isEmpty();
            List<String> wentBack = wentBack(runtimes);
            assertThat(wentBack)
                    .as("keys handled by the old generation after the new one")
                    .isEmpty();

            // One writer of each step: the runtime whose judge wrote it first; the others lost under the fence.
            long stepWrites = logged(runtimes, "canary ramp at 25%");
            long promotions = logged(runtimes, "promoted: it serves all keys");
            long lost = logged(runtimes, "another runtime wrote the canary ramp's step first");
            System.out.printf(
                    "FleetCanaryIT: %d messages over %d keys, each handled once; the 25%% step written %d time(s),"
                            + " the promotion %d time(s), %d write(s) lost to another runtime's%n",
                    total, KEYS, stepWrites, promotions, lost);
            assertThat(stepWrites).as("runtimes that wrote the 25% step").isEqualTo(1);
            assertThat(promotions).as("runtimes that wrote the promotion").isEqualTo(1);

            // A ramp aborted through one runtime, then a deploy through another that followed the abort: the
            // follower's view of the record is the record (the fence compares the ramp), so the deploy goes through.
            HttpResponse<String> second = admin(
                    runtimes.get(0),
                    "POST",
                    "/v1/subscriptions/" + FLEET + "/canary?steps=5,25,100&stepEvery=600s",
                    HttpRequest.BodyPublishers.ofFile(handler("S")));
            assertThat(second.statusCode()).as(second.body()).isEqualTo(200);
            Waits.until(
                    "b follows the second ramp",
                    Duration.ofSeconds(30),
                    () -> step(runtimes.get(1)).equals("5%"),
                    () -> step(runtimes.get(1)));
            HttpResponse<String> aborted = admin(
                    runtimes.get(0),
                    "POST",
                    "/v1/subscriptions/" + FLEET + "/canary/abort",
                    HttpRequest.BodyPublishers.noBody());
            assertThat(aborted.statusCode()).as(aborted.body()).isEqualTo(200);
            Waits.until(
                    "b follows the abort",
                    Duration.ofSeconds(30),
                    () -> step(runtimes.get(1)).equals("aborted"),
                    () -> step(runtimes.get(1)));
            HttpResponse<String> deployed = admin(
                    runtimes.get(1),
                    "PUT",
                    "/v1/subscriptions/" + FLEET + "/jar",
                    HttpRequest.BodyPublishers.ofFile(handler("D")));
            assertThat(deployed.statusCode()).as(deployed.body()).isEqualTo(200);

            // A canary recorded with the manifest alone (no runtime asked): every runtime reads it and joins its step.
            Path manifest = folder.resolve("a.yaml");
            Path canaryJar = handler("R");
            String[] recorded = Cli.printed(
                    0,
                    "deploy",
                    canaryJar.toString(),
                    "--subscription",
                    FLEET,
                    "--canary",
                    "5%",
                    "--steps",
                    "5,100",
                    "--step-every",
                    "600s",
                    "--manifest",
                    manifest.toString());
            assertThat(recorded[0])
                    .contains("as a canary on 5% of keys (steps [5, 100]); every runtime runs and judges");
            for (Runtime runtime : runtimes) {
                Waits.until(
                        runtime.name() + " follows the ramp recorded with --manifest",
                        Duration.ofSeconds(30),
                        () -> step(runtime).equals("5%"),
                        () -> step(runtime));
            }
            // A deploy through the store during that ramp is refused, as through a runtime (before, it dropped the
            // ramp from the record).
            String[] refused = Cli.printed(
                    2, "deploy", handler("Z").toString(), "--subscription", FLEET, "--manifest", manifest.toString());
            assertThat(refused[1]).contains("runs a canary ramp of generation").contains("a deploy is refused");
            assertThat(step(runtimes.get(2))).isEqualTo("5%");
            HttpResponse<String> abortedAgain = admin(
                    runtimes.get(2),
                    "POST",
                    "/v1/subscriptions/" + FLEET + "/canary/abort",
                    HttpRequest.BodyPublishers.noBody());
            assertThat(abortedAgain.statusCode()).as(abortedAgain.body()).isEqualTo(200);
        } finally {
            sender.shutdownNow();
            for (Runtime runtime : runtimes) {
                runtime.process().close();
            }
        }
    }

    /** "HANDLED label value attempt" lines of all runtimes, as {label, value, attempt}. */
    private static List<String[]> handled(List<Runtime> runtimes) {
        List<String[]> lines = new ArrayList<>();
        for (Runtime runtime : runtimes) {
            for (String line : List.copyOf(runtime.process().output)) {
                if (line.startsWith("HANDLED ")) {
                    String[] parts = line.substring("HANDLED ".length()).split(" ");
                    if (parts.length == 3) {
                        lines.add(parts);
                    }
                }
            }
        }
        return lines;
    }

    /**
     * Values handled by the old generation ("M") after their key was handled by the new one ("H"), in each runtime's
     * own order (Key_Shared keeps a key on one runtime while the consumers stay the same).
     */
    private static List<String> wentBack(List<Runtime> runtimes) {
        List<String> back = new ArrayList<>();
        for (Runtime runtime : runtimes) {
            Map<String, String> movedOn = new HashMap<>();
            for (String line : List.copyOf(runtime.process().output)) {
                if (!line.startsWith("HANDLED ")) {
                    continue;
                }
                String[] parts = line.substring("HANDLED ".length()).split(" ");
                String key = parts[1].substring(0, parts[1].indexOf(':'));
                if (parts[0].equals("H")) {
                    movedOn.put(key, runtime.name());
                } else if (movedOn.containsKey(key)) {
                    back.add(parts[1] + " on " + runtime.name() + " (moved on " + movedOn.get(key) + ")");
                }
            }
        }
        return back;
    }

    private static long logged(List<Runtime> runtimes, String text) {
        return runtimes.stream()
                .flatMap(runtime -> List.copyOf(runtime.process().output).stream())
                .filter(line -> line.contains(text))
                .count();
    }
}
