package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.FailureBackoff;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.ManualTime;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Durable delays in the settlement ({@code durableDelays: true}), on a manual clock: which waits are copied to the
 * delay topic (at least {@code durableAfter}, never the last attempt), that the original is acknowledged only once its
 * copy is stored, and that a copy not stored leaves the wait to the process. Off, nothing is copied.
 */
class DelayCopiesTest {
    private static final Failure BOOM = new Failure(Failure.Stage.HANDLER, new IllegalStateException("boom"));

    private final RecordingConsumerCalls consumer = new RecordingConsumerCalls();
    private final List<String> calls = consumer.calls;
    private final ManualTime time = new ManualTime();
    private final RecordingMetrics metrics = new RecordingMetrics();

    private record Written(Map<String, String> properties, long deliverAt, CompletableFuture<Void> stored) {}

    private final List<Written> written = new ArrayList<>();
    private final DelayWriter<String> writer = (work, properties, deliverAt) -> {
        Written copy = new Written(properties, deliverAt, new CompletableFuture<>());
        written.add(copy);
        return copy.stored;
    };

    private static SubscriptionSpec.Builder shared() {
        return SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .type(SubscriptionKind.SHARED);
    }

    private Settlement<String> settlement(SubscriptionSpec.Builder builder) {
        SubscriptionSpec spec = builder.build();
        DelayCopies<String> delays = new DelayCopies<>(
                spec,
                writer,
                message -> "persistent://public/default/orders@" + message,
                message -> Map.of("tenant", "acme"),
                new CopyWrites<>(CopyCommits.acknowledged(), new PendingOutputs(1000, time), time),
                metrics,
                time);
        return new Settlement<>(
                spec, consumer, DeadLettering.byClient(spec, time), time, metrics, Settlement.Outage.none(), delays);
    }

    private UnitOfWork<String> received(int attempt) {
        return new UnitOfWork<>("m", "id-1", attempt, false, time.nanoTime());
    }

    @Test
    void aLongRetryAfterIsCopiedToTheDelayTopicAndTheOriginalAcknowledgedOnceTheCopyIsStored() {
        Settlement<String> settlement = settlement(shared().durableDelays(Duration.ofSeconds(5)));
        long now = time.currentTimeMillis();

        assertThat(settlement.apply(received(1), Outcome.retryAfter(Duration.ofSeconds(30))))
                .isEqualTo(Settled.RETRY_AFTER);

        assertThat(written).hasSize(1);
        assertThat(written.get(0).deliverAt).isEqualTo(now + 30_000);
        assertThat(written.get(0).properties)
                .containsEntry("tenant", "acme")
                .containsEntry("settle.origin", "persistent://public/default/orders@m")
                .containsEntry("settle.attempts", "1");
        assertThat(calls).as("not before the copy is stored").isEmpty();
        written.get(0).stored.complete(null);
        assertThat(calls).containsExactly("acknowledge m");
        assertThat(metrics.held.get()).as("nothing held in the process").isZero();
        assertThat(metrics.durableDelaysPublished.get()).isEqualTo(1);
        assertThat(metrics.durableDelaysPending.get()).isEqualTo(1);
        time.advance(Duration.ofSeconds(30));
        assertThat(calls).as("no negative acknowledgement when the wait ends").containsExactly("acknowledge m");
        assertThat(metrics.durableDelaysPending.get()).isZero();
    }

    @Test
    void aWaitShorterThanDurableAfterIsHeldInTheProcess() {
        Settlement<String> settlement = settlement(shared().durableDelays(Duration.ofSeconds(5)));

        settlement.apply(received(1), Outcome.retryAfter(Duration.ofMillis(4_999)));

        assertThat(written).isEmpty();
        assertThat(metrics.held.get()).isEqualTo(1);
        time.advance(Duration.ofMillis(4_999));
        assertThat(calls).containsExactly("negativeAcknowledge m");
    }

    @Test
    void aWaitOfExactlyDurableAfterIsCopied() {
        Settlement<String> settlement = settlement(shared().durableDelays(Duration.ofSeconds(5)));

        settlement.apply(received(1), Outcome.retryAfter(Duration.ofSeconds(5)));

        assertThat(written).hasSize(1);
    }

    @Test
    void aFailureBackoffPastTheThresholdIsCopiedWithTheAttemptsMade() {
        Settlement<String> settlement = settlement(shared().durableDelays(Duration.ofSeconds(5))
                .failureBackoff(Optional.of(new FailureBackoff(Duration.ofSeconds(10), 2, Duration.ofMinutes(1)))));

        assertThat(settlement.failed(received(2), BOOM)).isEqualTo(Settled.ERROR);

        assertThat(written).hasSize(1);
        assertThat(written.get(0).properties).containsEntry("settle.attempts", "2");
        written.get(0).stored.complete(null);
        assertThat(calls).containsExactly("acknowledge m");
    }

    @Test
    void aCopyNotStoredLeavesTheWaitToTheProcessAndLosesNothing() {
        Settlement<String> settlement = settlement(shared().durableDelays(Duration.ofSeconds(5)));

        settlement.apply(received(1), Outcome.retryAfter(Duration.ofSeconds(30)));
        written.get(0).stored.completeExceptionally(new IllegalStateException("the delay topic is not writable"));

        assertThat(calls).isEmpty();
        assertThat(metrics.held.get()).isEqualTo(1);
        assertThat(metrics.durableDelaysPublished.get()).isZero();
        time.advance(Duration.ofSeconds(30));
        assertThat(calls).containsExactly("negativeAcknowledge m");
    }

    @Test
    void theLastAttemptIsNeverCopiedItsDeadLetterIsWrittenWhenItsWaitEnds() {
        Settlement<String> settlement = settlement(shared().durableDelays(Duration.ofSeconds(5))
                .deadLetter(
                        Optional.of(new DeadLetter(3, "persistent://public/default/orders-dlq", Optional.empty()))));

        settlement.apply(received(3), Outcome.retryAfter(Duration.ofSeconds(30)));

        assertThat(written).isEmpty();
        assertThat(metrics.held.get()).isEqualTo(1);
    }

    @Test
    void withDurableDelaysOffEveryWaitIsHeldInTheProcessAsTheContractSays() {
        Settlement<String> settlement = settlement(shared());

        settlement.apply(received(1), Outcome.retryAfter(Duration.ofSeconds(30)));

        assertThat(written).isEmpty();
        assertThat(metrics.held.get()).isEqualTo(1);
        time.advance(Duration.ofSeconds(30));
        assertThat(calls).containsExactly("negativeAcknowledge m");
    }
}
