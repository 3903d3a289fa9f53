package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.Settle;
import dev.settle.runtime.isolation.HandlerWork;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.Waits;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.Producer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A batch handler swapped through the admin API while messages arrive (issue 47, docs/live-code.md "The swap"):
 * nothing lost or handled twice, each batch call on one generation, and a swap from a batch handler to a handler of
 * one message refused with its reason.
 */
class BatchSwapIT extends LiveCodeHarness {
    static final String CALLS = "settle.test.live.batch-calls";

    /** Every batch call: the label of the generation that made it, and the values it was handed. */
    final Collection<Call> calls = new ConcurrentLinkedQueue<>();

    record Call(String label, List<String> values, long atMillis) {}

    @BeforeEach
    void recordCalls() {
        // A JDK type, so that handlers in their own class loaders can call it: "label:v1,v2,...".
        Consumer<String> sink = line -> {
            int colon = line.indexOf(':');
            calls.add(new Call(
                    line.substring(0, colon),
                    Arrays.asList(line.substring(colon + 1).split(",")),
                    System.currentTimeMillis()));
        };
        System.getProperties().put(CALLS, sink);
    }

    @AfterEach
    void forgetCalls() {
        System.getProperties().remove(CALLS);
    }

    @Test
    void aBatchHandlerSwappedFourTimesUnderLoadLosesNothingAndEachBatchRunsOnOneGeneration() throws Exception {
        String topic = topic("batch-swap");
        batchRecorder("manifest.jar", "M");
        byte[] a = bytes(batchRecorder("a.jar", "A"));
        byte[] b = bytes(batchRecorder("b.jar", "B"));
        Settle settle = start(batchManifest(topic));
        int total;
        int rate = 350;
        List<Double> pauses = new ArrayList<>();
        List<Long> swapsAt = new ArrayList<>();
        long[] sendingStarted = {0};
        long[] sendingEnded = {0};
        AtomicBoolean swapsDone = new AtomicBoolean();
        AtomicInteger sent = new AtomicInteger();
        try (Producer<String> producer = producer(topic)) {
            // The first generation takes messages before the load starts: on a busy machine the consumer's first
            // receive may come late, and a generation that made no call would say nothing of its batches.
            producer.send("warm-up");
            await(
                    () -> calls.stream().anyMatch(call -> call.label().equals("M")),
                    Duration.ofSeconds(30),
                    () -> "'warm-up' not handed to generation M");
            Thread sender = new Thread(() -> {
                long started = System.nanoTime();
                sendingStarted[0] = System.currentTimeMillis();
                // At least six seconds, and on past the last swap, so the last generation takes messages too.
                long lastSwapSeen = Long.MAX_VALUE;
                for (int i = 0; ; i++) {
                    long due = started + TimeUnit.SECONDS.toNanos(1) * i / rate;
                    long ahead = due - System.nanoTime();
                    if (ahead > 0) {
                        try {
                            // Not a spin: on two cores a spinning sender took one from the build's other classes.
                            Waits.pause(Duration.ofNanos(ahead), "the sender's pace");
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    if (swapsDone.get() && lastSwapSeen == Long.MAX_VALUE) {
                        lastSwapSeen = due;
                    }
                    if (due - started >= TimeUnit.SECONDS.toNanos(6) && due - lastSwapSeen >= 700_000_000L) {
                        break;
                    }
                    producer.sendAsync("m-" + i);
                    sent.incrementAndGet();
                }
                producer.flushAsync().join();
                sendingEnded[0] = System.currentTimeMillis();
            });
            sender.setDaemon(true);
            sender.start();
            try {
                for (int swap = 0; swap < 4; swap++) {
                    Waits.pause(Duration.ofMillis(1200), "four swaps spread over the six seconds of sending");
                    HttpResponse<String> answer = deploy(settle, swap % 2 == 0 ? a : b);
                    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
                    pauses.add(Double.parseDouble(field(answer.body(), "swapMillis")));
                    swapsAt.add(System.currentTimeMillis());
                }
            } finally {
                swapsDone.set(true);
            }
            sender.join();
            total = sent.get() + 1;
            await(
                    () -> calls.stream().mapToLong(call -> call.values().size()).sum() >= total,
                    Duration.ofSeconds(60),
                    () -> calls.stream().mapToLong(call -> call.values().size()).sum() + " of " + total
                            + " messages handed to batch calls");
            Waits.pause(Duration.ofSeconds(1), "time for a repeated call to show before the calls are counted");
        }
        PulsarAdmin admin = pulsar.admin();
        // The broker's own count: every message acknowledged, and each dispatched once.
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
        Map<String, Long> callsPerValue = calls.stream()
                .flatMap(call -> call.values().stream())
                .collect(Collectors.groupingBy(value -> value, Collectors.counting()));
        // Every message handed to exactly one call, so to exactly one generation; none lost.
        assertThat(callsPerValue).hasSize(total);
        assertThat(callsPerValue.entrySet().stream()
                        .filter(e -> e.getValue() != 1)
                        .toList())
                .isEmpty();
        // A call is made by one generation's code: its label is the generation of every message in it.
        assertThat(calls).allSatisfy(call -> assertThat(call.values()).hasSizeBetween(1, 50));
        Map<String, Long> perLabel = calls.stream()
                .collect(Collectors.groupingBy(
                        Call::label,
                        Collectors.summingLong(call -> call.values().size())));
        assertThat(perLabel.keySet())
                .as(
                        "generations that made calls; first and last call per generation %s; sent from %d to %d, swaps at %s",
                        calls.stream()
                                .collect(
                                        Collectors.groupingBy(Call::label, Collectors.summarizingLong(Call::atMillis))),
                        sendingStarted[0],
                        sendingEnded[0],
                        swapsAt)
                .containsExactlyInAnyOrder("M", "A", "B");
        List<Double> sorted = pauses.stream().sorted().toList();
        System.out.printf(
                "batch swap under load: %d messages at %d/s over %.1f s in %d calls, 4 swaps; messages per generation"
                        + " label %s; swap pause p50 %.3f ms, max %.3f ms (all %s)%n",
                total,
                rate,
                (sendingEnded[0] - sendingStarted[0]) / 1000.0,
                calls.size(),
                perLabel,
                sorted.get(sorted.size() / 2),
                sorted.get(sorted.size() - 1),
                pauses);
        assertThat(field(
                        request(settle, "GET", "/v1/subscriptions/live", null, TOKEN)
                                .body(),
                        "generation"))
                .isEqualTo("5");

        // A handler of one message is not swapped in for a batch handler: refused, naming why and what to do.
        HttpResponse<String> refused = deploy(settle, bytes(recorder("single.jar", "S")));
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(400);
        assertThat(refused.body())
                .contains("is a Handler (one message per call), but subscription 'live' runs a BatchHandler")
                .contains("a swap keeps the shape");
        try (Producer<String> producer = producer(topic)) {
            producer.send("after-refusal");
        }
        await(
                () -> calls.stream().anyMatch(call -> call.values().contains("after-refusal")),
                Duration.ofSeconds(20),
                () -> "'after-refusal' not handed to a batch call");
        assertThat(calls.stream().filter(call -> call.values().contains("after-refusal")))
                .singleElement()
                .extracting(Call::label)
                .as("the running batch generation goes on after the refusal")
                .isEqualTo("B");
    }

    @Test
    void underACanaryRampEachBatchCallHoldsMessagesOfOneGenerationAndEachMessageIsHandledOnce() throws Exception {
        String topic = topic("batch-canary");
        batchRecorder("manifest.jar", "M");
        byte[] canary = bytes(batchRecorder("canary.jar", "C"));
        Settle settle = start(batchManifest(topic));
        int keys = 300;
        int rate = 200;
        List<String> sent = new ArrayList<>();
        try (Producer<String> producer = producer(topic)) {
            producer.newMessage().key("warm-up").value("warm-up").send();
            await(
                    () -> calls.stream().anyMatch(call -> call.label().equals("M")),
                    Duration.ofSeconds(30),
                    () -> "'warm-up' not handed to generation M");
            // At 5% until a command promotes it: the slice stands still while the batches are looked at.
            HttpResponse<String> ramp =
                    request(settle, "POST", "/v1/subscriptions/live/canary?steps=5,100&stepEvery=0s", canary, TOKEN);
            assertThat(ramp.statusCode()).as(ramp.body()).isEqualTo(200);
            long started = System.nanoTime();
            for (int i = 0; i < 8 * rate; i++) {
                long due = started + TimeUnit.SECONDS.toNanos(1) * i / rate;
                long ahead = due - System.nanoTime();
                if (ahead > 0) {
                    // Not a spin: on two cores a spinning sender took one from the build's other classes.
                    Waits.pause(Duration.ofNanos(ahead), "the sender's pace");
                }
                String key = "key-" + (i % keys);
                String value = key + ":" + (i / keys);
                producer.newMessage().key(key).value(value).sendAsync();
                sent.add(value);
            }
            producer.flush();
            await(
                    () -> calls.stream().mapToLong(call -> call.values().size()).sum() >= sent.size() + 1,
                    Duration.ofSeconds(60),
                    () -> calls.stream().mapToLong(call -> call.values().size()).sum() + " of " + (sent.size() + 1)
                            + " messages handed to batch calls");
        }
        List<Call> duringRamp = List.copyOf(calls);
        // While the ramp runs, the outcomes carry the generation that settled them.
        String scraped = scrape(settle);
        System.out.println("outcomes during the ramp: "
                + scraped.lines()
                        .filter(line -> line.startsWith("settle_outcomes_total{") && line.contains("outcome=\"ack\""))
                        .toList());
        assertThat(scraped)
                .containsPattern(
                        "settle_outcomes_total\\{generation=\"1\",outcome=\"ack\",subscription=\"live\"} [1-9]")
                .containsPattern(
                        "settle_outcomes_total\\{generation=\"2\",outcome=\"ack\",subscription=\"live\"} [1-9]");
        HttpResponse<String> promoted = request(settle, "POST", "/v1/subscriptions/live/canary/promote", null, TOKEN);
        assertThat(promoted.statusCode()).as(promoted.body()).isEqualTo(200);
        try (Producer<String> producer = producer(topic)) {
            producer.newMessage().key("key-0").value("after-promotion").send();
        }
        await(
                () -> calls.stream().anyMatch(call -> call.values().contains("after-promotion")),
                Duration.ofSeconds(20),
                () -> "'after-promotion' not handed to a batch call");

        // Each call holds messages of one generation: the canary's only keys in its 5% slice, the current one's none.
        List<Call> mixed = new ArrayList<>();
        int canaryMessages = 0;
        for (Call call : duringRamp) {
            for (String value : call.values()) {
                if (value.equals("warm-up")) {
                    continue;
                }
                boolean inSlice = dev.settle.runtime.canary.KeySlice.of(5)
                        .contains(CanaryIT.Messages.keyed(value.substring(0, value.indexOf(':'))));
                if (inSlice != call.label().equals("C")) {
                    mixed.add(call);
                    break;
                }
                canaryMessages += inSlice ? 1 : 0;
            }
        }
        Map<String, Long> callsPerValue = calls.stream()
                .flatMap(call -> call.values().stream())
                .collect(Collectors.groupingBy(value -> value, Collectors.counting()));
        System.out.printf(
                "batch canary at 5%%: %d messages in %d calls (%d by the canary, %d of its messages); 0 calls mixed"
                        + " expected, %d seen%n",
                sent.size(),
                duringRamp.size(),
                duringRamp.stream().filter(call -> call.label().equals("C")).count(),
                canaryMessages,
                mixed.size());
        assertThat(mixed).as("calls holding a message of the other generation").isEmpty();
        assertThat(canaryMessages).isPositive();
        assertThat(sent).allMatch(callsPerValue::containsKey);
        assertThat(callsPerValue.entrySet().stream()
                        .filter(e -> e.getValue() != 1)
                        .toList())
                .as("messages handed to more than one call")
                .isEmpty();
        assertThat(calls.stream().filter(call -> call.values().contains("after-promotion")))
                .singleElement()
                .extracting(Call::label)
                .as("the promoted canary serves every key")
                .isEqualTo("C");
    }

    /** A batch handler that reports each call under {@code label}; each call costs 3 ms, as a bulk write would. */
    Path batchRecorder(String name, String label) {
        return TestJar.at(folder.resolve(name))
                .source("test.BatchRecorder", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.util.*;
                        import java.util.function.Consumer;
                        public class BatchRecorder implements BatchHandler<String> {
                            @SuppressWarnings("unchecked")
                            private final Consumer<String> sink =
                                    (Consumer<String>) System.getProperties().get("%s");
                            @Override public BatchResult handle(List<Delivery<String>> batch) throws Exception {
                                StringJoiner values = new StringJoiner(",", "%s:", "");
                                for (Delivery<String> delivery : batch) {
                                    values.add(delivery.value());
                                }
                                sink.accept(values.toString());
                                // Deliberately slow, as a bulk write: a swap under load must find batches in flight.
                                %s
                                return BatchResult.acknowledgeAll(batch);
                            }
                        }
                        """.formatted(CALLS, label, HandlerWork.pause(3)))
                .resource("META-INF/services/dev.settle.sdk.BatchHandler", "test.BatchRecorder\n")
                .build();
    }

    Path batchManifest(String topic) throws Exception {
        Path file = manifest(topic, "", 2);
        Files.writeString(file, Files.readString(file) + """
                    batch:
                      maxMessages: 50
                      maxWait: 20ms
                """);
        return file;
    }
}
