package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.BreakerSettings;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.ManualTime;
import java.lang.reflect.Proxy;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.junit.jupiter.api.Test;

class HeldForOutageTest {
    private static final Failure DOWN = new Failure(Failure.Stage.HANDLER, new ConnectException("db down"));
    private static final Failure BUG = new Failure(Failure.Stage.HANDLER, new IllegalStateException("bug"));

    private final ManualTime time = new ManualTime();
    private final List<String> receiving = new ArrayList<>();
    private final List<Message<?>> redriven = new ArrayList<>();
    private final AtomicInteger heldGauge = new AtomicInteger();
    private final List<String> states = new ArrayList<>();
    private final BreakerPart outage = HeldForOutage.of(
            SubscriptionSpec.builder("orders", List.of("orders")).build(),
            Optional.of(new HeldForOutage.Receiving() {
                @Override
                public void pause() {
                    receiving.add("pause");
                }

                @Override
                public void resume() {
                    receiving.add("resume");
                }

                @Override
                public void redrive(Message<?> message, long receivedNanos) {
                    redriven.add(message);
                }
            }),
            time,
            new RecordingMetrics() {
                @Override
                public void breakerChanged(String state) {
                    states.add(state);
                }

                @Override
                public void heldForOutageChanged(int delta) {
                    heldGauge.addAndGet(delta);
                }
            });

    @Test
    void theFailureThatOpensItPausesReceivingAndIsHeldWithTheOnesAfterIt() {
        List<UnitOfWork<Message<?>>> first = failKeys(1, 4, DOWN);
        assertThat(first).as("closed: the usual path").isEmpty();

        assertThat(outage.holds(work("k5", 5), DOWN)).isTrue();
        assertThat(outage.holds(work("k6", 6), DOWN)).isTrue();

        assertThat(outage.state()).isEqualTo("open");
        assertThat(receiving).containsExactly("pause");
        assertThat(outage.held()).isEqualTo(2);
        assertThat(heldGauge).hasValue(2);
        assertThat(redriven).isEmpty();
    }

    @Test
    void anotherExceptionIsNeverHeldEvenWhileOpen() {
        open();
        assertThat(outage.holds(work("k9", 9), BUG)).isFalse();
        assertThat(outage.held()).isEqualTo(1);
    }

    @Test
    void probesRotateAcrossHeldKeysAtABackoffAndAFailedProbeCountsForItsMessageOnly() {
        open();
        UnitOfWork<Message<?>> k6 = work("k6", 6);
        outage.holds(k6, DOWN);
        UnitOfWork<Message<?>> k5again = work("k5", 7);
        outage.holds(k5again, DOWN);

        time.advance(Duration.ofMillis(99));
        assertThat(redriven).isEmpty();
        time.advance(Duration.ofMillis(1));
        assertThat(redriven).as("the first probe, k5's oldest").hasSize(1);
        assertThat(outage.state()).isEqualTo("half-open");
        Message<?> probe = redriven.get(0);
        assertThat(probe.getKey()).isEqualTo("k5");

        assertThat(outage.holds(work(probe), DOWN))
                .as("the probe's failure takes the usual path")
                .isFalse();
        assertThat(outage.state()).isEqualTo("open");
        assertThat(outage.held()).isEqualTo(2);

        time.advance(Duration.ofMillis(199));
        assertThat(redriven).hasSize(1);
        time.advance(Duration.ofMillis(1));
        assertThat(redriven).as("the second probe, 200 ms later, another key").hasSize(2);
        assertThat(redriven.get(1).getKey()).isEqualTo("k6");
    }

    @Test
    void aSuccessfulProbeClosesItResumesAndHandsEveryHeldMessageOutAgainInKeyOrder() {
        open();
        outage.holds(work("k5", 6), DOWN);
        time.advance(Duration.ofMillis(100));
        assertThat(redriven).hasSize(1);

        outage.succeeded(time.nanoTime());

        assertThat(outage.state()).isEqualTo("closed");
        assertThat(receiving).containsExactly("pause", "resume");
        assertThat(redriven).extracting(m -> m.getMessageId().toString()).containsExactly("7:5:-1", "7:6:-1");
        assertThat(outage.held()).isZero();
        assertThat(heldGauge).hasValue(0);
        assertThat(states).containsExactly("closed", "open", "half-open", "closed");
        time.advance(Duration.ofSeconds(10));
        assertThat(redriven).as("no probe after closing").hasSize(2);
    }

    @Test
    void aProbeThatNeitherSucceedsNorFailsCountsAsFailedAtTheNextProbesTurnSoReceivingNeverStallsHalfOpen() {
        open();
        outage.holds(work("k6", 6), DOWN);
        time.advance(Duration.ofMillis(100));
        assertThat(redriven).as("the first probe").hasSize(1);
        assertThat(outage.state()).isEqualTo("half-open");

        // Its call asked for a retry (or its exactly-once commit failed): neither a success nor a failure.
        outage.settledOtherwise();
        time.advance(Duration.ofMillis(199));
        assertThat(outage.state()).isEqualTo("half-open");
        time.advance(Duration.ofMillis(1));
        assertThat(outage.state()).as("200 ms without an answer").isEqualTo("open");
        assertThat(outage.reason()).isEqualTo("the probe failed with no answer from message 7:5:-1 within 200ms");

        time.advance(Duration.ofMillis(199));
        assertThat(redriven).hasSize(1);
        time.advance(Duration.ofMillis(1));
        assertThat(redriven).as("the next probe, another key").hasSize(2);
        assertThat(redriven.get(1).getKey()).isEqualTo("k6");

        outage.succeeded(time.nanoTime());
        assertThat(outage.state()).isEqualTo("closed");
        time.advance(Duration.ofSeconds(10));
        assertThat(states).as("no deadline left behind").endsWith("closed");
    }

    @Test
    void aProbeWhoseAcknowledgementIsRefusedAsAConflictClosesItAsASuccessDoes() {
        open();
        time.advance(Duration.ofMillis(100));
        Message<?> probe = redriven.get(0);
        Failure conflict = new Failure(
                Failure.Stage.TRANSACTION,
                new TransactionFailedException(
                        "acknowledging 1 messages in their transaction failed",
                        new PulsarClientException.TransactionConflictException("already acked before")));

        assertThat(outage.holds(work(probe), conflict))
                .as("not held: its input is settled")
                .isFalse();

        assertThat(outage.state()).isEqualTo("closed");
        assertThat(outage.held()).isZero();
        assertThat(receiving).containsExactly("pause", "resume");
    }

    @Test
    void aConflictClosesItOnlyForACallReceivedSinceItOpenedAndIsNeverHeld() {
        UnitOfWork<Message<?>> receivedBefore = work("k8", 8);
        time.advance(Duration.ofMillis(1));
        open();
        Failure conflict = new Failure(
                Failure.Stage.TRANSACTION,
                new TransactionFailedException(
                        "committing failed",
                        new PulsarClientException.TransactionConflictException("already acked before")));

        assertThat(outage.holds(receivedBefore, conflict)).isFalse();
        assertThat(outage.state()).as("a call received before the opening").isEqualTo("open");
        assertThat(outage.held()).isEqualTo(1);

        assertThat(outage.holds(work("k9", 9), conflict)).isFalse();
        assertThat(outage.state()).as("a call received since").isEqualTo("closed");
    }

    @Test
    void withNothingHeldTheProbeIsReceivingAgainAndTheNextDependencyFailurePausesAgain() {
        open();
        time.advance(Duration.ofMillis(100));
        assertThat(outage.holds(work(redriven.get(0)), DOWN))
                .as("the probe failed")
                .isFalse();
        assertThat(outage.held()).isZero();

        time.advance(Duration.ofMillis(200));
        assertThat(receiving).containsExactly("pause", "pause", "resume");
        assertThat(outage.state()).isEqualTo("half-open");
        assertThat(outage.reason()).isEqualTo("probing with receiving again (no message held)");

        assertThat(outage.holds(work("k1", 20), DOWN)).isTrue();
        assertThat(outage.state()).isEqualTo("open");
        assertThat(receiving).containsExactly("pause", "pause", "resume", "pause");
    }

    @Test
    void aFailureWhoseBackoffEndsWhileOpenIsKeptInsteadOfNacked() {
        assertThat(outage.isDependency(DOWN)).isTrue();
        assertThat(outage.isDependency(BUG)).isFalse();
        UnitOfWork<Message<?>> waiting = work("k0", 100);
        assertThat(outage.keeps(waiting)).as("closed: nacked as usual").isFalse();
        open();
        assertThat(outage.keeps(waiting)).isTrue();
        assertThat(outage.held()).isEqualTo(2);
    }

    @Test
    void newCodeClosesItAndAStopLeavesTheHeldMessagesUnacknowledged() {
        open();
        outage.newCode();
        assertThat(outage.state()).isEqualTo("closed");
        assertThat(outage.reason()).isEqualTo("new code went live");
        assertThat(redriven).hasSize(1);

        open();
        assertThat(outage.abandon()).isEqualTo(1);
        assertThat(outage.held()).isZero();
        time.advance(Duration.ofSeconds(10));
        assertThat(redriven).as("no probe after the stop").hasSize(1);
    }

    @Test
    void offItHoldsNothing() {
        BreakerPart off = HeldForOutage.of(
                SubscriptionSpec.builder("orders", List.of("orders"))
                        .breaker(BreakerSettings.OFF)
                        .build(),
                Optional.empty(),
                time,
                new RecordingMetrics());
        assertThat(off).isSameAs(BreakerPart.OFF);
        for (int key = 1; key <= 10; key++) {
            assertThat(off.holds(work("k" + key, key), DOWN)).isFalse();
        }
        assertThat(off.state()).isEqualTo("off");
    }

    /** Opens the breaker with five keys: the fifth's message is held. */
    private void open() {
        failKeys(1, 5, DOWN);
        assertThat(outage.state()).isEqualTo("open");
    }

    private List<UnitOfWork<Message<?>>> failKeys(int from, int to, Failure failure) {
        List<UnitOfWork<Message<?>>> held = new ArrayList<>();
        for (int key = from; key <= to; key++) {
            UnitOfWork<Message<?>> work = work("k" + key, key + 1000L * (time.nanoTime() % 1000));
            if (outage.holds(work, failure)) {
                held.add(work);
            }
        }
        return held;
    }

    private UnitOfWork<Message<?>> work(String key, long entry) {
        return work(message(new MessageIdImpl(7, entry, -1), key));
    }

    private UnitOfWork<Message<?>> work(Message<?> message) {
        return new UnitOfWork<>(message, message.getMessageId(), 1, false, time.nanoTime());
    }

    private static Message<?> message(MessageId id, String key) {
        return (Message<?>) Proxy.newProxyInstance(
                Message.class.getClassLoader(),
                new Class<?>[] {Message.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getMessageId" -> id;
                    case "getRedeliveryCount" -> 0;
                    case "hasKey" -> true;
                    case "getKey" -> key;
                    case "hasOrderingKey" -> false;
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "toString" -> "message " + id;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }
}
