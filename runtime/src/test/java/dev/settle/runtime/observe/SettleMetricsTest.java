package dev.settle.runtime.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.within;

import dev.settle.runtime.driver.DriverMetrics;
import dev.settle.runtime.driver.Settled;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class SettleMetricsTest {
    private static final long MILLIS = 1_000_000;

    private final SettleMetrics metrics = new SettleMetrics();

    @Test
    void exposesEveryMetricOfTheDesignWithItsType() {
        metrics.forSubscription("orders");
        metrics.watchReceiverQueue("orders", () -> 0);

        String text = Exposition.of(metrics.registry()).text;

        assertThat(text)
                .contains(
                        "# TYPE settle_deliveries_total counter\n",
                        "# TYPE settle_outcomes_total counter\n",
                        "# TYPE settle_handler_duration_seconds histogram\n",
                        "# TYPE settle_held_retries gauge\n",
                        "# TYPE settle_in_flight gauge\n",
                        "# TYPE settle_unacked_limit_reached gauge\n",
                        "# TYPE settle_dead_lettered_total counter\n",
                        "# TYPE settle_delivery_attempt histogram\n",
                        "# TYPE settle_receiver_queue_messages gauge\n",
                        "# TYPE jvm_memory_used_bytes gauge\n",
                        "# TYPE process_cpu_seconds_total counter\n");
        // The 1.x client appends _total itself: a doubled suffix would mean a name written with it.
        assertThat(text).doesNotContain("_total_total");
    }

    @Test
    void aFunctionsRecordedMetricIsASummaryPerSubscriptionAndName() {
        metrics.functionMetric("word-count", "words", 4);
        metrics.functionMetric("word-count", "words", 2.5);
        metrics.functionMetric("enrich", "words", 1);

        Exposition exposition = Exposition.of(metrics.registry());

        assertThat(exposition.text).contains("# TYPE settle_function_metric summary\n");
        assertThat(exposition.value("settle_function_metric_count{subscription=\"word-count\",name=\"words\"}"))
                .isEqualTo(2);
        assertThat(exposition.value("settle_function_metric_sum{subscription=\"word-count\",name=\"words\"}"))
                .isEqualTo(6.5);
        assertThat(exposition.value("settle_function_metric_count{subscription=\"enrich\",name=\"words\"}"))
                .isEqualTo(1);
    }

    @Test
    void everySeriesOfABoundSubscriptionIsLabelledBySubscriptionOnly() {
        metrics.forSubscription("orders");
        Exposition exposition = Exposition.of(metrics.registry());

        assertThat(exposition.value("settle_deliveries_total{subscription=\"orders\"}"))
                .isZero();
        assertThat(exposition.value("settle_dead_lettered_total{subscription=\"orders\"}"))
                .isZero();
        assertThat(exposition.value("settle_held_retries{subscription=\"orders\"}"))
                .isZero();
        assertThat(exposition.value("settle_in_flight{subscription=\"orders\"}"))
                .isZero();
        assertThat(exposition.value("settle_handler_duration_seconds_count{subscription=\"orders\"}"))
                .isZero();
        assertThat(exposition.value("settle_delivery_attempt_count{subscription=\"orders\"}"))
                .isZero();
        // settle_outcomes_total's generation is empty without a canary ramp: no label, as Prometheus reads it.
        assertThat(exposition.text.lines().filter(line -> line.startsWith("settle_")))
                .allMatch(
                        line -> line.matches(
                                "settle_[a-z_]+\\{(generation=\"\",)?((outcome|stage|state)=\"[a-z_-]+\",)?subscription=\"orders\"(,le=\"[^\"]+\")?} \\S+"));
    }

    @Test
    void everyFailureStageButTheHandlersOwnRetryAppearsAtZeroAndCountsByStage() {
        metrics.forSubscription("orders").failed(dev.settle.runtime.driver.Failure.Stage.DECODE);

        Exposition exposition = Exposition.of(metrics.registry());

        assertThat(exposition.samplesNamed("settle_failures_total"))
                .containsOnly(
                        entry("settle_failures_total{stage=\"decode\",subscription=\"orders\"}", 1.0),
                        entry("settle_failures_total{stage=\"handler\",subscription=\"orders\"}", 0.0),
                        entry("settle_failures_total{stage=\"output\",subscription=\"orders\"}", 0.0),
                        entry("settle_failures_total{stage=\"refused_retry_after\",subscription=\"orders\"}", 0.0),
                        entry("settle_failures_total{stage=\"transaction\",subscription=\"orders\"}", 0.0),
                        entry("settle_failures_total{stage=\"ack_timeout\",subscription=\"orders\"}", 0.0),
                        entry("settle_failures_total{stage=\"timeout\",subscription=\"orders\"}", 0.0));
    }

    @Test
    void everyOutcomeAppearsAtZeroBeforeItFirstHappens() {
        metrics.forSubscription("orders");

        Exposition exposition = Exposition.of(metrics.registry());

        assertThat(exposition.samplesNamed("settle_outcomes_total"))
                .containsOnly(Arrays.stream(Settled.values())
                        .map(how -> entry(
                                "settle_outcomes_total{outcome=\"" + how.label() + "\",subscription=\"orders\"}", 0.0))
                        .toArray(java.util.Map.Entry[]::new));
        assertThat(exposition.samplesNamed("settle_outcomes_total"))
                .containsKey("settle_outcomes_total{outcome=\"retry_after\",subscription=\"orders\"}");
    }

    @Test
    void whileARampRunsOutcomesCarryTheGenerationThatHandledThemAndWithoutOneNone() {
        DriverMetrics orders = metrics.forSubscription("orders");
        orders.settled(Settled.ACK, 1_000, 0);
        orders.settled(Settled.ACK, 1_000, 3);
        orders.settled(Settled.ACK, 1_000, 3);
        orders.settled(Settled.ERROR, 1_000, 4);
        orders.settled(Settled.DROP, 1_000, 4);

        String text = Exposition.of(metrics.registry()).text;

        // Without a ramp the label is empty, which Prometheus reads as absent: one series per outcome, as before.
        assertThat(text)
                .contains("settle_outcomes_total{generation=\"\",outcome=\"ack\",subscription=\"orders\"} 1.0")
                .contains("settle_outcomes_total{generation=\"3\",outcome=\"ack\",subscription=\"orders\"} 2.0")
                .contains("settle_outcomes_total{generation=\"4\",outcome=\"error\",subscription=\"orders\"} 1.0")
                .contains("settle_outcomes_total{generation=\"4\",outcome=\"drop\",subscription=\"orders\"} 1.0");
        // What leaves the backlog counts every generation's.
        assertThat(((SubscriptionMetrics) orders).settledForGood()).isEqualTo(4);
    }

    @Test
    void aKnownMixOfOutcomesCountsExactlyPerOutcomeAndSubscription() {
        DriverMetrics orders = metrics.forSubscription("orders");
        DriverMetrics payments = metrics.forSubscription("payments");
        settle(orders, Settled.ACK, 5);
        settle(orders, Settled.RETRY, 3);
        settle(orders, Settled.RETRY_AFTER, 2);
        settle(orders, Settled.ERROR, 1);
        settle(payments, Settled.DROP, 4);
        settle(payments, Settled.NONE, 1);
        settle(payments, Settled.REFUSED, 2);
        orders.deadLettered();

        Exposition exposition = Exposition.of(metrics.registry());

        assertThat(outcome(exposition, "orders", "ack")).isEqualTo(5);
        assertThat(outcome(exposition, "orders", "retry")).isEqualTo(3);
        assertThat(outcome(exposition, "orders", "retry_after")).isEqualTo(2);
        assertThat(outcome(exposition, "orders", "error")).isEqualTo(1);
        assertThat(outcome(exposition, "orders", "drop")).isZero();
        assertThat(outcome(exposition, "orders", "none")).isZero();
        assertThat(outcome(exposition, "orders", "refused")).isZero();
        assertThat(outcome(exposition, "payments", "drop")).isEqualTo(4);
        assertThat(outcome(exposition, "payments", "none")).isEqualTo(1);
        assertThat(outcome(exposition, "payments", "refused")).isEqualTo(2);
        assertThat(outcome(exposition, "payments", "ack")).isZero();
        assertThat(exposition.value("settle_deliveries_total{subscription=\"orders\"}"))
                .isEqualTo(11);
        assertThat(exposition.value("settle_deliveries_total{subscription=\"payments\"}"))
                .isEqualTo(7);
        assertThat(exposition.value("settle_dead_lettered_total{subscription=\"orders\"}"))
                .isEqualTo(1);
        assertThat(exposition.value("settle_dead_lettered_total{subscription=\"payments\"}"))
                .isZero();
    }

    @Test
    void histogramCountsEqualTheDeliveries() {
        DriverMetrics orders = metrics.forSubscription("orders");
        settle(orders, Settled.ACK, 6);
        settle(orders, Settled.ERROR, 3);

        Exposition exposition = Exposition.of(metrics.registry());

        double deliveries = exposition.value("settle_deliveries_total{subscription=\"orders\"}");
        assertThat(deliveries).isEqualTo(9);
        assertThat(exposition.value("settle_handler_duration_seconds_count{subscription=\"orders\"}"))
                .isEqualTo(deliveries);
        assertThat(exposition.value("settle_delivery_attempt_count{subscription=\"orders\"}"))
                .isEqualTo(deliveries);
    }

    @Test
    void handlerDurationIsInSecondsInBucketsFromOneMillisecondToOneMinute() {
        DriverMetrics orders = metrics.forSubscription("orders");
        orders.settled(Settled.ACK, 3 * MILLIS);
        orders.settled(Settled.ACK, 2_000 * MILLIS);
        orders.settled(Settled.ACK, 90_000 * MILLIS);

        Exposition exposition = Exposition.of(metrics.registry());

        assertThat(orders(exposition, "settle_handler_duration_seconds_bucket", "0.001"))
                .isZero();
        assertThat(orders(exposition, "settle_handler_duration_seconds_bucket", "0.005"))
                .isEqualTo(1);
        assertThat(orders(exposition, "settle_handler_duration_seconds_bucket", "2.5"))
                .isEqualTo(2);
        assertThat(orders(exposition, "settle_handler_duration_seconds_bucket", "60.0"))
                .isEqualTo(2);
        assertThat(orders(exposition, "settle_handler_duration_seconds_bucket", "+Inf"))
                .isEqualTo(3);
        assertThat(exposition.value("settle_handler_duration_seconds_sum{subscription=\"orders\"}"))
                .isCloseTo(92.003, within(1e-9));
    }

    @Test
    void deliveryAttemptsFallIntoTheirBuckets() {
        DriverMetrics orders = metrics.forSubscription("orders");
        orders.delivered(1, 0);
        orders.delivered(1, 0);
        orders.delivered(2, 0);
        orders.delivered(4, 0);
        orders.delivered(11, 0);

        Exposition exposition = Exposition.of(metrics.registry());

        assertThat(orders(exposition, "settle_delivery_attempt_bucket", "1.0")).isEqualTo(2);
        assertThat(orders(exposition, "settle_delivery_attempt_bucket", "2.0")).isEqualTo(3);
        assertThat(orders(exposition, "settle_delivery_attempt_bucket", "3.0")).isEqualTo(3);
        assertThat(orders(exposition, "settle_delivery_attempt_bucket", "5.0")).isEqualTo(4);
        assertThat(orders(exposition, "settle_delivery_attempt_bucket", "10.0")).isEqualTo(4);
        assertThat(orders(exposition, "settle_delivery_attempt_bucket", "20.0")).isEqualTo(5);
    }

    @Test
    void publishToHandlingLagFallsIntoItsBucketsInSeconds() {
        DriverMetrics orders = metrics.forSubscription("orders");
        orders.delivered(1, 3);
        orders.delivered(1, 40);
        orders.delivered(2, 7_000);

        Exposition exposition = Exposition.of(metrics.registry());

        assertThat(orders(exposition, "settle_delivery_lag_seconds_bucket", "0.005"))
                .isEqualTo(1);
        assertThat(orders(exposition, "settle_delivery_lag_seconds_bucket", "0.05"))
                .isEqualTo(2);
        assertThat(orders(exposition, "settle_delivery_lag_seconds_bucket", "5.0"))
                .isEqualTo(2);
        assertThat(orders(exposition, "settle_delivery_lag_seconds_bucket", "10.0"))
                .isEqualTo(3);
        assertThat(exposition.value("settle_delivery_lag_seconds_sum{subscription=\"orders\"}"))
                .isCloseTo(7.043, within(1e-9));
    }

    @Test
    void buildInfoAndConnectionStateAreReported() {
        java.util.concurrent.atomic.AtomicBoolean connected = new java.util.concurrent.atomic.AtomicBoolean();
        metrics.buildInfo("1.2.3", "4.2.4");
        metrics.watchConnection("orders", connected::get);

        assertThat(Exposition.of(metrics.registry())
                        .value("settle_build_info{version=\"1.2.3\",pulsar_client=\"4.2.4\"}"))
                .isEqualTo(1);
        assertThat(Exposition.of(metrics.registry()).value("settle_consumer_connected{subscription=\"orders\"}"))
                .isZero();
        connected.set(true);
        assertThat(Exposition.of(metrics.registry()).value("settle_consumer_connected{subscription=\"orders\"}"))
                .isEqualTo(1);
    }

    @Test
    void journalRecordsDroppedAreCountedByJournalTopicAtEachScrape() {
        java.util.concurrent.atomic.AtomicLong dropped = new java.util.concurrent.atomic.AtomicLong();
        metrics.watchJournal("persistent://acme/ops/journal", dropped::get);
        String sample = "settle_journal_records_dropped_total{topic=\"persistent://acme/ops/journal\"}";

        assertThat(Exposition.of(metrics.registry()).value(sample)).isZero();
        dropped.addAndGet(16_385);
        assertThat(Exposition.of(metrics.registry()).value(sample)).isEqualTo(16_385);
    }

    @Test
    void heldRetriesAndInFlightFollowTheDeltas() {
        DriverMetrics orders = metrics.forSubscription("orders");
        orders.heldChanged(1);
        orders.heldChanged(1);
        orders.heldChanged(1);
        orders.heldChanged(-1);
        orders.inFlightChanged(1);
        orders.inFlightChanged(1);
        orders.inFlightChanged(-1);

        Exposition exposition = Exposition.of(metrics.registry());

        assertThat(exposition.value("settle_held_retries{subscription=\"orders\"}"))
                .isEqualTo(2);
        assertThat(exposition.value("settle_in_flight{subscription=\"orders\"}"))
                .isEqualTo(1);
    }

    @Test
    void keyHoldsShowTheMessagesHeldBehindTheirKeyTheTimeoutsTheGapsAndTheOldestHoldsAge() {
        DriverMetrics orders = metrics.forSubscription("orders");
        orders.heldBehindKeyChanged(7);
        orders.heldBehindKeyChanged(-2);
        orders.keyHoldTimedOut();
        orders.keyGap();
        orders.keyGap();
        metrics.watchKeyHolds("orders", () -> 2.5);

        Exposition exposition = Exposition.of(metrics.registry());

        assertThat(exposition.value("settle_held_behind_key{subscription=\"orders\"}"))
                .isEqualTo(5);
        assertThat(exposition.value("settle_key_hold_timeouts_total{subscription=\"orders\"}"))
                .isEqualTo(1);
        assertThat(exposition.value("settle_key_gaps_total{subscription=\"orders\"}"))
                .isEqualTo(2);
        assertThat(exposition.value("settle_key_hold_oldest_age_seconds{subscription=\"orders\"}"))
                .isEqualTo(2.5);
    }

    @Test
    void bindingASubscriptionAgainContinuesItsCounters() {
        metrics.forSubscription("orders").delivered(1, 0);

        DriverMetrics again = metrics.forSubscription("orders");
        again.delivered(1, 0);

        assertThat(again).isSameAs(metrics.forSubscription("orders"));
        assertThat(Exposition.of(metrics.registry()).value("settle_deliveries_total{subscription=\"orders\"}"))
                .isEqualTo(2);
    }

    @Test
    void receiverQueueIsReadAtEachScrapeAndAFailingReaderSkipsOnlyItsSubscription() {
        int[] queued = {3};
        metrics.watchReceiverQueue("orders", () -> queued[0]);
        metrics.watchReceiverQueue("payments", () -> {
            throw new IllegalStateException("consumer closed");
        });

        assertThat(Exposition.of(metrics.registry()).value("settle_receiver_queue_messages{subscription=\"orders\"}"))
                .isEqualTo(3);
        queued[0] = 1000;
        Exposition exposition = Exposition.of(metrics.registry());

        assertThat(exposition.value("settle_receiver_queue_messages{subscription=\"orders\"}"))
                .isEqualTo(1000);
        assertThat(exposition.value("settle_receiver_queue_messages{subscription=\"payments\"}"))
                .isNull();
    }

    @Test
    void anUnwatchedReceiverQueueIsNoLongerReported() {
        metrics.watchReceiverQueue("orders", () -> 3);

        metrics.unwatchReceiverQueue("orders");

        assertThat(Exposition.of(metrics.registry()).samplesNamed("settle_receiver_queue_messages"))
                .isEmpty();
    }

    @Test
    void twoRuntimesInOneJvmKeepTheirOwnSeries() {
        SettleMetrics other = new SettleMetrics();
        metrics.forSubscription("orders").delivered(1, 0);
        other.forSubscription("payments").delivered(1, 0);

        Exposition mine = Exposition.of(metrics.registry());
        Exposition theirs = Exposition.of(other.registry());

        assertThat(mine.samplesNamed("settle_deliveries_total"))
                .containsOnlyKeys("settle_deliveries_total{subscription=\"orders\"}");
        assertThat(theirs.samplesNamed("settle_deliveries_total"))
                .containsOnlyKeys("settle_deliveries_total{subscription=\"payments\"}");
        assertThat(theirs.sampleNames()).contains("jvm_memory_used_bytes");
    }

    /** As a driver reports one message: delivered, in flight, settled. */
    private static void settle(DriverMetrics metrics, Settled how, int times) {
        for (int i = 0; i < times; i++) {
            metrics.delivered(1, 0);
            metrics.inFlightChanged(1);
            metrics.inFlightChanged(-1);
            metrics.settled(how, 2 * MILLIS);
        }
    }

    /** A bucket of one of {@code orders}' histograms. */
    private static double orders(Exposition exposition, String bucket, String le) {
        return exposition.value(bucket + "{subscription=\"orders\",le=\"" + le + "\"}");
    }

    private static double outcome(Exposition exposition, String subscription, String outcome) {
        return exposition.value(
                "settle_outcomes_total{subscription=\"" + subscription + "\",outcome=\"" + outcome + "\"}");
    }
}
