package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.BatchLimits;
import dev.settle.runtime.time.ManualTime;
import dev.settle.sdk.Outcome;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

class BatchGatheringTest {
    private final ManualTime time = new ManualTime();
    private final RecordingMetrics metrics = new RecordingMetrics();
    /** The calls the gathering handed to its threads, run by the test when it says. */
    private final ArrayDeque<Runnable> calls = new ArrayDeque<>();
    /** Each call's messages, by their ids. */
    private final List<List<String>> called = new ArrayList<>();

    private Function<List<UnitOfWork<Message<?>>>, List<BatchAnswer>> answer =
            batch -> batch.stream().map(work -> BatchAnswer.of(Outcome.ack())).toList();

    private final BatchPort port = new BatchPort() {
        @Override
        public Schema<?> schema() {
            return Schema.STRING;
        }

        @Override
        public List<BatchAnswer> call(List<UnitOfWork<Message<?>>> batch) {
            called.add(batch.stream().map(work -> work.id().toString()).toList());
            return answer.apply(batch);
        }

        @Override
        public String toString() {
            return "com.acme.Bulk";
        }
    };

    private BatchGathering gathering(int maxMessages, long maxBytes, Duration maxWait) {
        return new BatchGathering(
                "orders", new BatchLimits(maxMessages, maxBytes, maxWait), port, calls::add, time, metrics);
    }

    private static UnitOfWork<Message<?>> work(String id, String key, int bytes) {
        Message<?> message = (Message<?>) Proxy.newProxyInstance(
                Message.class.getClassLoader(),
                new Class<?>[] {Message.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getMessageId" -> id;
                    case "size" -> bytes;
                    case "hasKey" -> key != null;
                    case "getKey" -> key;
                    case "hasOrderingKey" -> false;
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "toString" -> "message " + id;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        return new UnitOfWork<>(message, id, 1, false, 0);
    }

    private static CompletableFuture<Outcome> hand(BatchGathering gathering, String id, String key, int bytes) {
        return gathering.handle(work(id, key, bytes)).toCompletableFuture();
    }

    private void runCalls() {
        for (Runnable call = calls.poll(); call != null; call = calls.poll()) {
            call.run();
        }
    }

    @Test
    void liveCodeNamesTheGenerationItRunsAndTheNamedGatheringStillCallsItsHandler() {
        BatchGathering named = gathering(2, 1_000_000, Duration.ofSeconds(5))
                .named("com.acme.Bulk (generation 2, sha256 0a1b2c3d4e5f)");

        // The journal reads a settlement's generation from this name ("generation 2"); it was 0 for batch handlers.
        assertThat(named.toString())
                .isEqualTo("batches of up to 2 messages, 1000000 bytes, 5s: com.acme.Bulk (generation 2, sha256"
                        + " 0a1b2c3d4e5f)");
        CompletableFuture<Outcome> a = hand(named, "a", null, 1);
        CompletableFuture<Outcome> b = hand(named, "b", null, 1);
        runCalls();
        assertThat(called).containsExactly(List.of("a", "b"));
        assertThat(a).isCompletedWithValue(Outcome.ack());
        assertThat(b).isCompletedWithValue(Outcome.ack());
    }

    @Test
    void itsNameIsMadeOnceNotForEachSettlementThatNamesItsCode() {
        BatchGathering gathering = gathering(100, 1_000_000, Duration.ofMillis(50));

        // The journal and tracing ask for it per settled message; the journal finds a text it wrote by identity.
        assertThat(gathering.toString())
                .isEqualTo("batches of up to 100 messages, 1000000 bytes, 50ms: com.acme.Bulk")
                .isSameAs(gathering.toString());
    }

    @Test
    void aBatchIsCalledOnceItHoldsMaxMessagesAndEachDeliveryGetsItsOwnOutcome() {
        BatchGathering gathering = gathering(3, 1_000_000, Duration.ofSeconds(1));
        answer = batch -> List.of(BatchAnswer.of(Outcome.ack()), BatchAnswer.of(Outcome.drop()), BatchAnswer.none());

        CompletableFuture<Outcome> first = hand(gathering, "m1", null, 10);
        CompletableFuture<Outcome> second = hand(gathering, "m2", null, 10);
        assertThat(calls).isEmpty();
        CompletableFuture<Outcome> third = hand(gathering, "m3", null, 10);
        runCalls();

        assertThat(called).containsExactly(List.of("m1", "m2", "m3"));
        assertThat(first).isCompletedWithValue(Outcome.ack());
        assertThat(second).isCompletedWithValue(Outcome.drop());
        assertThat(third).isCompletedWithValue(null);
        assertThat(metrics.batchSizes).containsExactly(3);
        assertThat(metrics.batchOutcomesMissing).hasValue(1);
    }

    @Test
    void aBatchIsCalledMaxWaitAfterItsFirstMessageWithWhatItHas() {
        BatchGathering gathering = gathering(100, 1_000_000, Duration.ofMillis(20));

        CompletableFuture<Outcome> first = hand(gathering, "m1", null, 10);
        time.advance(Duration.ofMillis(15));
        hand(gathering, "m2", null, 10);
        time.advance(Duration.ofMillis(4));
        assertThat(calls).isEmpty();
        time.advance(Duration.ofMillis(1));
        runCalls();

        assertThat(called).containsExactly(List.of("m1", "m2"));
        assertThat(first).isCompletedWithValue(Outcome.ack());
    }

    @Test
    void aBatchIsCalledBeforeTheMessageThatWouldTakeItPastMaxBytesAndALargerMessageGoesAlone() {
        BatchGathering gathering = gathering(100, 100, Duration.ofSeconds(1));

        hand(gathering, "m1", null, 60);
        hand(gathering, "m2", null, 60);
        hand(gathering, "big", null, 500);
        hand(gathering, "m3", null, 10);
        time.advance(Duration.ofSeconds(1));
        runCalls();

        assertThat(called).containsExactly(List.of("m1"), List.of("m2"), List.of("big"), List.of("m3"));
    }

    @Test
    void aKeysMessagesShareABatchInOrderButWaitForItsCalledBatchToBeSettledBeforeJoiningTheNext() {
        BatchGathering gathering = gathering(2, 1_000_000, Duration.ofSeconds(1));

        CompletableFuture<Outcome> a1 = hand(gathering, "a1", "a", 1);
        hand(gathering, "a2", "a", 1); // full: [a1, a2] is called (not yet run)
        hand(gathering, "a3", "a", 1); // waits: a's earlier messages are not settled
        hand(gathering, "b1", "b", 1);
        hand(gathering, "a4", "a", 1); // waits behind a3
        hand(gathering, "c1", null, 1); // [b1, c1] is called
        assertThat(calls).hasSize(2);
        assertThat(a1).isNotDone();

        calls.poll().run(); // [a1, a2] settled: a3 and a4 join the open batch in order, which fills it
        runCalls();

        assertThat(called).containsExactly(List.of("a1", "a2"), List.of("b1", "c1"), List.of("a3", "a4"));
    }

    @Test
    void aKeyWhoseWaitingMessagesFillABatchKeepsTheRestWaitingForThatOne() {
        BatchGathering gathering = gathering(2, 1_000_000, Duration.ofSeconds(1));

        hand(gathering, "x", null, 1);
        hand(gathering, "a1", "a", 1); // [x, a1] called
        hand(gathering, "a2", "a", 1);
        hand(gathering, "a3", "a", 1);
        hand(gathering, "a4", "a", 1);
        hand(gathering, "y", null, 1); // open: [y]

        calls.poll().run(); // a2 joins [y], which is called; a3 and a4 wait for it
        assertThat(calls).hasSize(1);
        calls.poll().run(); // a3 and a4 join a new batch
        runCalls();

        assertThat(called).containsExactly(List.of("x", "a1"), List.of("y", "a2"), List.of("a3", "a4"));
    }

    @Test
    void aBatchThatThrowsIsSplitAndOnlyTheMessageThatFailsAloneGetsTheFailure() {
        BatchGathering gathering = gathering(4, 1_000_000, Duration.ofSeconds(1));
        answer = batch -> {
            if (batch.stream().anyMatch(work -> work.id().equals("poison"))) {
                throw new IllegalStateException("bulk insert failed");
            }
            return batch.stream().map(work -> BatchAnswer.of(Outcome.ack())).toList();
        };
        Map<String, CompletableFuture<Outcome>> outcomes = new java.util.LinkedHashMap<>();
        for (String id : List.of("m1", "poison", "m3", "m4")) {
            outcomes.put(id, hand(gathering, id, null, 1));
        }
        runCalls();

        assertThat(outcomes.get("poison")).isCompletedExceptionally();
        assertThat(outcomes.get("poison").handle((none, error) -> error).join()).hasMessage("bulk insert failed");
        for (String good : List.of("m1", "m3", "m4")) {
            assertThat(outcomes.get(good)).isCompletedWithValue(Outcome.ack());
        }
        assertThat(called)
                .containsExactly(
                        List.of("m1", "poison", "m3", "m4"),
                        List.of("m1", "poison"),
                        List.of("m1"),
                        List.of("poison"),
                        List.of("m3", "m4"));
        assertThat(metrics.batchSplits).hasValue(2);
    }

    @Test
    void aFailureOfTheWholeCallReachesEveryDeliveryAndFreesItsKeys() {
        BatchGathering gathering = gathering(2, 1_000_000, Duration.ofSeconds(1));
        OutOfMemoryError fatal = new OutOfMemoryError("heap");
        answer = batch -> {
            throw fatal;
        };

        CompletableFuture<Outcome> a1 = hand(gathering, "a1", "a", 1);
        CompletableFuture<Outcome> a2 = hand(gathering, "a2", "a", 1);
        hand(gathering, "a3", "a", 1);
        calls.poll().run();

        assertThat(a1.handle((none, error) -> error).join()).isSameAs(fatal);
        assertThat(a2.handle((none, error) -> error).join()).isSameAs(fatal);
        time.advance(Duration.ofSeconds(1));
        assertThat(calls).as("a3 joined a batch once a1 and a2 were settled").hasSize(1);
    }
}
