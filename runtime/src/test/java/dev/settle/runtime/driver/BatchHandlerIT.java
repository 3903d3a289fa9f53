package dev.settle.runtime.driver;

import static dev.settle.runtime.driver.DriverFixture.spec;
import static dev.settle.runtime.driver.DriverFixture.topic;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.manifest.BatchLimits;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.SettleMetrics;
import dev.settle.runtime.trace.OpenTelemetryTracing;
import dev.settle.sdk.BatchHandler;
import dev.settle.sdk.BatchResult;
import dev.settle.sdk.Delivery;
import dev.settle.testbroker.Waits;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Batch handlers (issue 47) on a real broker: one call for many messages, each settled on its own outcome. */
@ExtendWith(DriverFixtures.class)
class BatchHandlerIT {
    /** The metrics as /metrics shows them: the batch calls and splits the gathering reports. */
    private final SettleMetrics registry = new SettleMetrics();

    private final DriverMetrics exposed = registry.forSubscription("sub");
    private final RecordingMetrics metrics = new RecordingMetrics() {
        @Override
        public void batchCalled(int size) {
            super.batchCalled(size);
            exposed.batchCalled(size);
        }

        @Override
        public void batchSplit(int size) {
            super.batchSplit(size);
            exposed.batchSplit(size);
        }
    };

    private final InMemorySpanExporter spans = InMemorySpanExporter.create();
    private final OpenTelemetrySdk openTelemetry = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder()
                    .addSpanProcessor(SimpleSpanProcessor.create(spans))
                    .build())
            .build();

    @AfterEach
    void shutDown() {
        openTelemetry.close();
    }
    /** Every call, in order: what each delivery of it was (value, attempt). */
    private final List<List<Seen>> calls = new CopyOnWriteArrayList<>();

    private static void publish(DriverFixture pulsar, String topic, List<String> values) throws Exception {
        try (Producer<String> producer = pulsar.client
                .newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            for (String value : values) {
                producer.sendAsync(value);
            }
            producer.flush();
        }
    }

    private SubscriptionDriver start(DriverFixture pulsar, SubscriptionSpec spec, BatchHandler<String> handler) {
        return pulsar.start(spec, port(pulsar, spec, handler), metrics);
    }

    private HandlerPort port(DriverFixture pulsar, SubscriptionSpec spec, BatchHandler<String> handler) {
        BatchHandler<String> recorded = batch -> {
            calls.add(batch.stream().map(Seen::of).toList());
            return handler.handle(batch);
        };
        return SdkBatchPort.of(recorded, String.class, spec).gathered(spec, pulsar.time, metrics);
    }

    @Test
    void aBatchThatThrowsIsSplitUntilThePoisonMessagesAreAloneAndOnlyTheySpendAttempts(DriverFixture pulsar)
            throws Exception {
        String topic = topic("batch-poison");
        String deadLetters = topic + "-dlq";
        Set<String> poison = Set.of("m7", "m50", "m93");
        List<String> values =
                java.util.stream.IntStream.range(0, 100).mapToObj(i -> "m" + i).toList();
        // Published before the subscription starts, so the first batch can hold all 100: maxWait is long enough for
        // the receiver queue to hand them over on a busy machine.
        publish(pulsar, topic, values);
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED)
                .deadLetter(3, deadLetters)
                .batch(new BatchLimits(100, BatchLimits.DEFAULT_MAX_BYTES, Duration.ofSeconds(1)))
                .build();

        // A bulk write that fails as a whole, naming the first bad message it met. Traced.
        BatchHandler<String> bulkWrite = batch -> {
            for (Delivery<String> delivery : batch) {
                if (poison.contains(delivery.value())) {
                    throw new IllegalStateException("bulk write refused " + delivery.value());
                }
            }
            return BatchResult.acknowledgeAll(batch);
        };
        pulsar.start(
                spec,
                port(pulsar, spec, bulkWrite),
                metrics,
                DriverWiring.NONE.withTracing(OpenTelemetryTracing.of(openTelemetry)));

        List<Message<String>> dead = pulsar.readAll(deadLetters, 3, Duration.ofSeconds(60));
        assertThat(dead).extracting(Message::getValue).containsExactlyInAnyOrderElementsOf(poison);
        for (Message<String> letter : dead) {
            assertThat(letter.getProperties())
                    .as("the dead letter of %s carries its own cause", letter.getValue())
                    .containsEntry(DeadLetterProperties.EXCEPTION_MESSAGE, "bulk write refused " + letter.getValue());
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> pulsar.backlog(topic, "sub") == 0);

        assertThat(calls.get(0)).as("the first batch").hasSize(100);
        List<List<Seen>> firstRound = calls.stream()
                .filter(call -> call.stream().allMatch(seen -> seen.attempt() == 1))
                .toList();
        assertThat(firstRound).as("calls until the poison messages were alone").hasSizeLessThanOrEqualTo(40);
        for (String bad : poison) {
            assertThat(calls.stream()
                            .filter(call ->
                                    call.size() == 1 && call.get(0).value().equals(bad))
                            .map(call -> call.get(0).attempt()))
                    .as("%s called alone, once per attempt, up to its cap", bad)
                    .containsExactly(1, 2, 3);
        }
        Set<String> goodSeenAgain = calls.stream()
                .flatMap(List::stream)
                .filter(seen -> !poison.contains(seen.value()) && seen.attempt() > 1)
                .map(Seen::value)
                .collect(Collectors.toSet());
        assertThat(goodSeenAgain).as("good messages delivered a second time").isEmpty();
        assertThat(metrics.count(Settled.ACK)).as("good messages acknowledged").isEqualTo(97);
        assertThat(metrics.deadLettered).hasValue(3);
        assertThat(metrics.batchSplits.get()).isPositive();

        // /metrics: one settle_batch_size observation per call, bisection's included, and the splits.
        HistogramSnapshot.HistogramDataPointSnapshot sizes = histogram("settle_batch_size");
        assertThat(sizes.getCount()).isEqualTo(calls.size());
        assertThat(sizes.getSum()).isEqualTo(calls.stream().mapToInt(List::size).sum());
        assertThat(counter("settle_batch_splits")).isEqualTo(metrics.batchSplits.get());
        // Each poison message's first attempt sits in calls of 100, 50, 25 ... 1 that threw (7 calls); there are
        // at most three such chains, partly shared: at least 6 splits, and never more than the calls that threw.
        assertThat(metrics.batchSplits.get()).isBetween(6, 40);

        // One span per call, each linked to the spans of its messages' handlings; the calls that threw say so.
        await().atMost(Duration.ofSeconds(10))
                .until(() -> named("process batch sub").size() == calls.size());
        Map<String, SpanData> handlings =
                named("process sub").stream().collect(Collectors.toMap(SpanData::getSpanId, span -> span));
        List<SpanData> callSpans = named("process batch sub");
        for (SpanData call : callSpans) {
            long size = call.getAttributes().get(AttributeKey.longKey("messaging.batch.message_count"));
            assertThat(call.getLinks()).as("the links of a call of %s", size).hasSize((int) size);
            assertThat(call.getLinks())
                    .allSatisfy(link -> assertThat(handlings)
                            .containsKey(link.getSpanContext().getSpanId()));
        }
        assertThat(callSpans)
                .filteredOn(call -> call.getLinks().size() == 100)
                .as("the first call, of all 100")
                .hasSize(1)
                .allSatisfy(call -> assertThat(call.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR));
        assertThat(callSpans)
                .filteredOn(call -> call.getStatus().getStatusCode() == StatusCode.ERROR)
                .as("calls that threw: each split once, or a single poison message")
                .hasSize(metrics.batchSplits.get() + 9);
    }

    private List<SpanData> named(String name) {
        return spans.getFinishedSpanItems().stream()
                .filter(span -> span.getName().equals(name))
                .toList();
    }

    private HistogramSnapshot.HistogramDataPointSnapshot histogram(String name) {
        return registry.registry().scrape().stream()
                .filter(snapshot -> snapshot.getMetadata().getName().equals(name))
                .flatMap(snapshot -> ((HistogramSnapshot) snapshot).getDataPoints().stream())
                .filter(point -> "sub".equals(point.getLabels().get("subscription")))
                .findFirst()
                .orElseThrow();
    }

    private double counter(String name) {
        return registry.registry().scrape().stream()
                .filter(snapshot -> snapshot.getMetadata().getName().equals(name))
                .flatMap(snapshot -> ((CounterSnapshot) snapshot).getDataPoints().stream())
                .filter(point -> "sub".equals(point.getLabels().get("subscription")))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue)
                .sum();
    }

    @Test
    void eachMessageOfABatchIsSettledAsTheSettlementTableSaysForItsOwnOutcome(DriverFixture pulsar) throws Exception {
        String topic = topic("batch-outcomes");
        Duration ackTimeout = Duration.ofSeconds(2);
        Duration delay = Duration.ofMillis(800);
        publish(pulsar, topic, List.of("ack", "drop", "retry", "retryAfter", "none"));
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED)
                .ackTimeout(ackTimeout)
                .batch(new BatchLimits(100, BatchLimits.DEFAULT_MAX_BYTES, Duration.ofMillis(500)))
                .build();

        start(pulsar, spec, batch -> {
            BatchResult result = BatchResult.create();
            for (Delivery<String> delivery : batch) {
                if (delivery.attempt() > 1) {
                    result.ack(delivery);
                    continue;
                }
                switch (delivery.value()) {
                    case "ack" -> result.ack(delivery);
                    case "drop" -> result.drop(delivery);
                    case "retry" -> result.retry(delivery);
                    case "retryAfter" -> result.retryAfter(delivery, delay);
                    default -> {} // "none": left out of the result
                }
            }
            return result;
        });

        await().atMost(Duration.ofSeconds(30))
                .until(() -> calls.stream()
                                .flatMap(List::stream)
                                .filter(seen -> seen.attempt() == 2)
                                .count()
                        == 3);
        await().atMost(Duration.ofSeconds(10)).until(() -> pulsar.backlog(topic, "sub") == 0);
        // Past the ack timeout again: a message left unacknowledged by mistake would be back by then.
        await().during(ackTimeout.plusSeconds(1))
                .atMost(ackTimeout.plusSeconds(10))
                .until(() -> calls.stream().mapToLong(List::size).sum() == 8);

        assertThat(calls.get(0))
                .as("the first batch")
                .extracting(Seen::value)
                .containsExactly("ack", "drop", "retry", "retryAfter", "none");
        Map<String, List<Seen>> byValue =
                calls.stream().flatMap(List::stream).collect(Collectors.groupingBy(Seen::value));
        long first = calls.get(0).get(0).atNanos();
        // ack and drop: acknowledged, never sent again.
        assertThat(byValue.get("ack")).extracting(Seen::attempt).containsExactly(1);
        assertThat(byValue.get("drop")).extracting(Seen::attempt).containsExactly(1);
        // retry: sent again at once (here: within the next batch's maxWait), count + 1.
        assertThat(byValue.get("retry")).extracting(Seen::attempt).containsExactly(1, 2);
        assertThat(Duration.ofNanos(byValue.get("retry").get(1).atNanos() - first))
                .isLessThan(delay);
        // retryAfter(d): sent again after d, count + 1.
        assertThat(byValue.get("retryAfter")).extracting(Seen::attempt).containsExactly(1, 2);
        assertThat(Duration.ofNanos(byValue.get("retryAfter").get(1).atNanos() - first))
                .isGreaterThanOrEqualTo(delay);
        // No outcome: sent again after the ack timeout, count + 1.
        assertThat(byValue.get("none")).extracting(Seen::attempt).containsExactly(1, 2);
        assertThat(Duration.ofNanos(byValue.get("none").get(1).atNanos() - first))
                .isGreaterThanOrEqualTo(ackTimeout);

        assertThat(metrics.count(Settled.ACK)).isEqualTo(4);
        assertThat(metrics.count(Settled.DROP)).isEqualTo(1);
        assertThat(metrics.count(Settled.RETRY)).isEqualTo(1);
        assertThat(metrics.count(Settled.RETRY_AFTER)).isEqualTo(1);
        assertThat(metrics.count(Settled.NONE)).isEqualTo(1);
        assertThat(metrics.batchOutcomesMissing).hasValue(1);
    }

    @Test
    void withTwoBatchesInFlightAKeysMessagesComeInPublishOrderAndNeverInTwoRunningCalls(DriverFixture pulsar)
            throws Exception {
        String topic = topic("batch-keys");
        int keys = 10;
        int perKey = 20;
        try (Producer<String> producer = pulsar.client
                .newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            for (int i = 0; i < perKey; i++) {
                for (int k = 0; k < keys; k++) {
                    producer.newMessage().key("k" + k).value("k" + k + ":" + i).sendAsync();
                }
            }
            producer.flush();
        }
        SubscriptionSpec spec = spec(topic, SubscriptionKind.SHARED)
                .concurrency(2)
                .batch(new BatchLimits(16, BatchLimits.DEFAULT_MAX_BYTES, Duration.ofMillis(50)))
                .build();
        Map<String, Integer> running = new java.util.concurrent.ConcurrentHashMap<>();
        Map<String, Integer> lastSeen = new java.util.concurrent.ConcurrentHashMap<>();
        List<String> violations = new CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicInteger overlapping = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();

        start(pulsar, spec, batch -> {
            overlapping.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            Set<String> mine = batch.stream().map(d -> d.key().orElseThrow()).collect(Collectors.toSet());
            for (String key : mine) {
                if (running.merge(key, 1, Integer::sum) > 1) {
                    violations.add(key + " in two running calls");
                }
            }
            try {
                for (Delivery<String> delivery : batch) {
                    String key = delivery.key().orElseThrow();
                    int index = Integer.parseInt(
                            delivery.value().substring(delivery.value().indexOf(':') + 1));
                    Integer previous = lastSeen.put(key, index);
                    if (index != (previous == null ? 0 : previous + 1)) {
                        violations.add(key + ": " + index + " after " + previous);
                    }
                }
                Waits.pause(Duration.ofMillis(20), "a bulk call that takes a while, so the two calls overlap");
            } finally {
                for (String key : mine) {
                    running.merge(key, -1, Integer::sum);
                }
                inFlight.decrementAndGet();
            }
            return BatchResult.acknowledgeAll(batch);
        });

        await().atMost(Duration.ofSeconds(60)).until(() -> metrics.count(Settled.ACK) == keys * perKey);
        assertThat(violations).isEmpty();
        assertThat(lastSeen)
                .hasSize(keys)
                .allSatisfy((key, last) -> assertThat(last).isEqualTo(perKey - 1));
        assertThat(calls).allSatisfy(call -> assertThat(call).hasSizeLessThanOrEqualTo(16));
        assertThat(overlapping.get()).as("batches in flight at once").isBetween(1, 2);
    }
}
