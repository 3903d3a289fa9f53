package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.RetryOrder;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.SystemTime;
import dev.settle.sdk.Handler;
import dev.settle.sdk.Outcome;
import dev.settle.testbroker.PulsarFixture;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Key-ordered retries against a real broker (docs/concepts.md, "Key-ordered retries"): key K's 3rd message fails twice
 * with {@code retryAfter(2s)}; K's 4th to 10th must be handled only after the 3rd succeeds, while 50 other keys are
 * handled meanwhile. With {@code order: none} the same run shows K's later messages passing the retry.
 */
class KeyOrderedRetriesIT {
    private static final int LATER_KEYS = 50;
    private static final int MESSAGES_PER_LATER_KEY = 4;
    private static final Duration RETRY = Duration.ofSeconds(2);

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    /** One handler call: which message, which attempt, and its place among every call of the test. */
    record Handling(String key, int seq, int attempt, long order) {}

    private final List<Handling> handled = new CopyOnWriteArrayList<>();
    private final AtomicLong calls = new AtomicLong();
    private final RecordingMetrics metrics = new RecordingMetrics();

    @Test
    void onKeySharedTheRetriedMessageKeepsItsKeysLaterMessagesBehindItAndOtherKeysGoOn() throws Exception {
        String topic = pulsar.topic("key-ordered-retries");
        SubscriptionDriver driver = start(topic, SubscriptionKind.KEY_SHARED, null, 4);
        assertThat(driver.parts()).contains("key hold: retries keep key order (keyHoldTimeout 10s)");

        for (int repetition = 0; repetition < 10; repetition++) {
            Repetition run = repeat(topic, repetition);
            System.out.printf(
                    "repetition %d: key %s handled %s; %d inversions; %d messages of %d other keys handled while"
                            + " the 3rd waited%n",
                    repetition, run.key, run.sequence, run.inversions, run.othersMeanwhile, run.otherKeysMeanwhile);
            assertThat(run.inversions)
                    .as("repetition %d: later messages handled before the 3rd succeeded", repetition)
                    .isZero();
            assertThat(run.sequence)
                    .as("repetition %d: the key's handlings, attempts shown as 3/2", repetition)
                    .containsExactly("1", "2", "3", "3/2", "3/3", "4", "5", "6", "7", "8", "9", "10");
            assertThat(run.otherKeysMeanwhile)
                    .as("repetition %d: other keys handled while the 3rd waited", repetition)
                    .isEqualTo(LATER_KEYS);
            assertThat(run.othersMeanwhile).isGreaterThanOrEqualTo(LATER_KEYS);
        }
        assertThat(metrics.keyHoldsTimedOut.get()).isZero();
        assertThat(metrics.heldBehindKey.get()).isZero();
    }

    @Test
    void withOrderNoneTheKeysLaterMessagesPassTheRetry() throws Exception {
        String topic = pulsar.topic("unordered-retries");
        start(topic, SubscriptionKind.KEY_SHARED, RetryOrder.NONE, 4);

        Repetition run = repeat(topic, 0);
        System.out.printf("order: none: key %s handled %s; %d inversions%n", run.key, run.sequence, run.inversions);
        assertThat(run.inversions).isEqualTo(7);
    }

    @Test
    void onSharedOrderKeyHoldsTheKeyInThisRuntimeToo() throws Exception {
        String topic = pulsar.topic("shared-key-ordered-retries");
        start(topic, SubscriptionKind.SHARED, RetryOrder.KEY, 1);

        Repetition run = repeat(topic, 0);
        System.out.printf("Shared, order: key: key %s handled %s%n", run.key, run.sequence);
        assertThat(run.inversions).isZero();
        assertThat(run.sequence).containsExactly("1", "2", "3", "3/2", "3/3", "4", "5", "6", "7", "8", "9", "10");
        assertThat(run.otherKeysMeanwhile).isEqualTo(LATER_KEYS);
    }

    @Test
    void aDeadLetterReleasesItsKeyAndCountsTheGap() throws Exception {
        String topic = pulsar.topic("dead-lettered-key");
        SubscriptionSpec spec = SubscriptionSpec.builder(PulsarFixture.unique("sub"), List.of(topic))
                .type(SubscriptionKind.KEY_SHARED)
                .concurrency(4)
                .deadLetter(2, topic + "-dlq")
                .build();
        start(spec, delivery -> {
            throw new IllegalStateException("K's 3rd cannot be handled");
        });

        Repetition run = repeat(topic, 0, 1);
        System.out.printf("dead-lettered: key %s handled %s%n", run.key, run.sequence);
        assertThat(run.sequence).containsExactly("1", "2", "3", "3/2", "4", "5", "6", "7", "8", "9", "10");
        assertThat(metrics.keyGaps.get()).isEqualTo(1);
        assertThat(metrics.heldBehindKey.get()).isZero();
    }

    private SubscriptionDriver start(String topic, SubscriptionKind type, RetryOrder order, int concurrency) {
        SubscriptionSpec spec = SubscriptionSpec.builder(PulsarFixture.unique("sub"), List.of(topic))
                .type(type)
                .order(order)
                .concurrency(concurrency)
                .build();
        return start(spec, delivery -> Outcome.retryAfter(RETRY));
    }

    /** Starts {@code spec}'s driver: K's 3rd message is answered by {@code failing} on its first two attempts. */
    private SubscriptionDriver start(SubscriptionSpec spec, Handler<String> failing) {
        Handler<String> handler = delivery -> {
            String[] keyAndSeq = delivery.value().split(":");
            int seq = Integer.parseInt(keyAndSeq[1]);
            handled.add(new Handling(keyAndSeq[0], seq, delivery.attempt(), calls.incrementAndGet()));
            boolean theFailingOne = keyAndSeq[0].startsWith("K") && seq == 3 && delivery.attempt() <= 2;
            return theFailingOne ? failing.handle(delivery) : Outcome.ack();
        };
        SystemTime time = pulsar.closeAfterTest(new SystemTime());
        SubscriptionDriver driver = SubscriptionDriver.start(
                pulsar.client(), spec, SdkHandlerPort.of(handler, String.class, spec), time, metrics);
        // Closed before the timer (last registered, first closed).
        pulsar.closeAfterTest(() -> driver.stop(Duration.ofSeconds(5)));
        return driver;
    }

    /** What one repetition showed. */
    record Repetition(
            String key, List<String> sequence, long inversions, long othersMeanwhile, long otherKeysMeanwhile) {}

    /**
     * Sends K's 10 messages; once K's 3rd was first handled, sends 4 messages of each of 50 other keys; waits until all
     * are handled (K's 3rd three times) and says what happened.
     */
    private Repetition repeat(String topic, int repetition) throws Exception {
        return repeat(topic, repetition, 2);
    }

    /** As above, K's 3rd handled {@code failures} times before it is settled for good. */
    private Repetition repeat(String topic, int repetition, int failures) throws Exception {
        String key = "K" + repetition;
        try (Producer<String> producer = pulsar.client()
                .newProducer(Schema.STRING)
                .topic(topic)
                .enableBatching(false)
                .create()) {
            for (int seq = 1; seq <= 10; seq++) {
                producer.newMessage().key(key).value(key + ":" + seq).send();
            }
            PulsarFixture.await(
                    key + "'s 3rd message handled once", Duration.ofSeconds(60), () -> handlings(key, 3), n -> n >= 1);
            for (int seq = 1; seq <= MESSAGES_PER_LATER_KEY; seq++) {
                for (int other = 0; other < LATER_KEYS; other++) {
                    String otherKey = "o" + repetition + "-" + other;
                    producer.newMessage()
                            .key(otherKey)
                            .value(otherKey + ":" + seq)
                            .sendAsync();
                }
            }
            producer.flush();
        }
        String prefix = "o" + repetition + "-";
        PulsarFixture.await(
                "every message of repetition " + repetition + " handled",
                Duration.ofSeconds(90),
                () -> handled.stream()
                        .filter(h -> h.key().equals(key) || h.key().startsWith(prefix))
                        .count(),
                n -> n >= 10 + failures + LATER_KEYS * MESSAGES_PER_LATER_KEY);

        List<Handling> ofKey = handled.stream().filter(h -> h.key().equals(key)).toList();
        long firstTry = ofKey.stream()
                .filter(h -> h.seq() == 3 && h.attempt() == 1)
                .findFirst()
                .orElseThrow()
                .order();
        long succeeded = ofKey.stream()
                .filter(h -> h.seq() == 3 && h.attempt() == failures + 1)
                .findFirst()
                .orElseThrow()
                .order();
        long inversions =
                ofKey.stream().filter(h -> h.seq() > 3 && h.order() < succeeded).count();
        List<String> sequence = ofKey.stream()
                .sorted((a, b) -> Long.compare(a.order(), b.order()))
                .map(h -> h.attempt() == 1 ? Integer.toString(h.seq()) : h.seq() + "/" + h.attempt())
                .toList();
        List<Handling> othersMeanwhile = handled.stream()
                .filter(h -> h.key().startsWith(prefix) && h.order() > firstTry && h.order() < succeeded)
                .toList();
        Set<String> otherKeys = othersMeanwhile.stream().map(Handling::key).collect(Collectors.toSet());
        return new Repetition(key, sequence, inversions, othersMeanwhile.size(), otherKeys.size());
    }

    private long handlings(String key, int seq) {
        return handled.stream()
                .filter(h -> h.key().equals(key) && h.seq() == seq)
                .count();
    }
}
