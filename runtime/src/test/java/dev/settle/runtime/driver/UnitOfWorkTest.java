package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.ManualTime;
import dev.settle.sdk.Outcome;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

/** The unit of work the driver makes per delivery: the failure as a value, the acknowledgement as a stage. */
class UnitOfWorkTest {
    private final ManualTime time = new ManualTime();
    private final RecordingMetrics metrics = new RecordingMetrics();
    private final List<String> calls = new CopyOnWriteArrayList<>();
    private final AtomicReference<UnitOfWork<Message<?>>> seen = new AtomicReference<>();

    private final ConsumerCalls<Message<?>> consumer = new ConsumerCalls<>() {
        @Override
        public CompletionStage<Void> acknowledge(Message<?> message) {
            calls.add("acknowledge");
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void negativeAcknowledge(Message<?> message) {
            calls.add("negativeAcknowledge");
        }
    };

    /** A port that keeps the unit of work it was given and answers with {@code answer}. */
    private HandlerPort port(Answer answer) {
        return new HandlerPort() {
            @Override
            public Schema<?> schema() {
                return Schema.BYTES;
            }

            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) throws Exception {
                seen.set(work);
                return answer.handle();
            }
        };
    }

    @FunctionalInterface
    private interface Answer {
        CompletionStage<Outcome> handle() throws Exception;
    }

    private static SubscriptionSpec.Builder spec(SubscriptionKind type) {
        return SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .type(type)
                .failureBackoff(java.util.Optional.empty());
    }

    private void deliver(SubscriptionSpec spec, HandlerPort port, Message<?> message) {
        try (DetachedDriver driver =
                new DetachedDriver(spec, port, consumer, time, metrics, time::currentTimeMillis, error -> {})) {
            driver.submit(message, time.nanoTime(), how -> {});
        }
    }

    /** A message with an id, attempt 1 and nothing else: the fake ports never look inside. */
    static Message<?> message(MessageId id) {
        return message(id, 0);
    }

    /** A message as the broker hands it out for the {@code redeliveryCount + 1}-th time. */
    static Message<?> message(MessageId id, int redeliveryCount) {
        return (Message<?>) Proxy.newProxyInstance(
                Message.class.getClassLoader(),
                new Class<?>[] {Message.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getMessageId" -> id;
                    case "getRedeliveryCount" -> redeliveryCount;
                    case "getPublishTime" -> 0L;
                    case "hasKey", "hasOrderingKey" -> false;
                    case "getTopicName" -> "persistent://public/default/orders";
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "toString" -> "message " + id;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void aHandlerThatThrowsLeavesItsFailureOnTheUnitOfWorkAtStageHandler() {
        IllegalStateException bug = new IllegalStateException("bug");
        deliver(
                spec(SubscriptionKind.SHARED).build(),
                port(() -> {
                    throw bug;
                }),
                message(MessageId.earliest));

        Failure failure = seen.get().failure().orElseThrow();
        assertThat(failure.stage()).isEqualTo(Failure.Stage.HANDLER);
        assertThat(failure.cause()).isSameAs(bug);
        assertThat(seen.get().attempt()).isEqualTo(1);
        assertThat(seen.get().acknowledged()).isEmpty();
        assertThat(calls).containsExactly("negativeAcknowledge");
        assertThat(metrics.failures).containsExactly(java.util.Map.entry(Failure.Stage.HANDLER, 1));
    }

    @Test
    void noOutcomeWithAnAckTimeoutIsAFailureAtStageAckTimeoutThatHasNoCause() {
        deliver(
                spec(SubscriptionKind.SHARED).ackTimeout(Duration.ofSeconds(2)).build(),
                port(() -> CompletableFuture.completedFuture(null)),
                message(MessageId.earliest));

        Failure failure = seen.get().failure().orElseThrow();
        assertThat(failure.stage()).isEqualTo(Failure.Stage.ACK_TIMEOUT);
        assertThat(failure.stage().label()).isEqualTo("ack_timeout");
        assertThat(failure.exception()).isEmpty();
        assertThat(metrics.failures).containsExactly(java.util.Map.entry(Failure.Stage.ACK_TIMEOUT, 1));
        assertThat(calls).isEmpty();
    }

    @Test
    void noOutcomeWithoutAnAckTimeoutIsNoFailure() {
        deliver(
                spec(SubscriptionKind.SHARED).build(),
                port(() -> CompletableFuture.completedFuture(null)),
                message(MessageId.earliest));

        assertThat(seen.get().failure()).isEmpty();
        assertThat(metrics.failures).isEmpty();
    }

    @Test
    void aStageWithACauseRefusesNoneAndOneWithoutRefusesOne() {
        org.assertj.core.api.Assertions.assertThatNullPointerException()
                .isThrownBy(() -> new Failure(Failure.Stage.HANDLER, null));
        org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
                .isThrownBy(() -> new Failure(Failure.Stage.ACK_TIMEOUT, new IllegalStateException()));
    }

    @Test
    void aPayloadThatCannotBeDecodedIsAFailureAtStageDecode() {
        PayloadDecodeException undecodable = new PayloadDecodeException("not JSON", null);
        deliver(
                spec(SubscriptionKind.SHARED).build(),
                port(() -> {
                    throw undecodable;
                }),
                message(MessageId.earliest));

        assertThat(seen.get().failure()).contains(new Failure(Failure.Stage.DECODE, undecodable));
        assertThat(metrics.failures).containsExactly(java.util.Map.entry(Failure.Stage.DECODE, 1));
    }

    @Test
    void anOutputNotStoredIsAFailureAtStageOutput() {
        OutputNotDurableException lost = new OutputNotDurableException("not stored", new IllegalStateException());
        deliver(
                spec(SubscriptionKind.SHARED).build(),
                port(() -> CompletableFuture.failedFuture(lost)),
                message(MessageId.earliest));

        assertThat(seen.get().failure()).contains(new Failure(Failure.Stage.OUTPUT, lost));
        assertThat(calls).containsExactly("negativeAcknowledge");
    }

    @Test
    void aRetryAfterTheAckTimeoutWouldOvertakeIsAFailureAtStageRefusedThatSaysWhy() {
        deliver(
                spec(SubscriptionKind.SHARED).ackTimeout(Duration.ofSeconds(2)).build(),
                port(() -> CompletableFuture.completedFuture(Outcome.retryAfter(Duration.ofSeconds(5)))),
                message(MessageId.earliest));

        Failure failure = seen.get().failure().orElseThrow();
        assertThat(failure.stage()).isEqualTo(Failure.Stage.REFUSED_RETRY_AFTER);
        assertThat(failure.cause())
                .isInstanceOf(RetryAfterRefusedException.class)
                .hasMessageContaining("retryAfter(5s) refused")
                .hasMessageContaining("ack timeout 2s");
        assertThat(calls).containsExactly("negativeAcknowledge");
    }

    @Test
    void anAcknowledgementIsKeptAsAStageAndNoFailureIsRecorded() {
        deliver(
                spec(SubscriptionKind.SHARED).build(),
                port(() -> CompletableFuture.completedFuture(Outcome.ack())),
                message(MessageId.earliest));

        assertThat(seen.get().failure()).isEmpty();
        assertThat(seen.get().acknowledged())
                .hasValueSatisfying(
                        stage -> assertThat(stage.toCompletableFuture()).isCompleted());
        assertThat(calls).containsExactly("acknowledge");
    }

    /** Hands the same copy in twice, the first acknowledged; how many reached the handler. */
    private int handledOfTwoCopies(SubscriptionKind type) {
        List<UnitOfWork<Message<?>>> handled = new CopyOnWriteArrayList<>();
        HandlerPort port = port(() -> {
            handled.add(seen.get());
            return CompletableFuture.completedFuture(Outcome.ack());
        });
        Message<?> copy = message(MessageId.earliest);
        try (DetachedDriver driver = new DetachedDriver(
                spec(type).build(), port, consumer, time, metrics, time::currentTimeMillis, error -> {})) {
            driver.submit(copy, time.nanoTime(), how -> {});
            driver.submit(copy, time.nanoTime(), how -> {});
        }
        return handled.size();
    }

    @Test
    void aCopyOfAnAcknowledgedMessageIsKeptFromTheHandlerOnSharedAndCounted() {
        assertThat(handledOfTwoCopies(SubscriptionKind.SHARED)).isEqualTo(1);
        assertThat(metrics.duplicatesSuppressed).hasValue(1);
        assertThat(calls).containsExactly("acknowledge", "acknowledge");
    }

    @Test
    void onExclusiveNoDuplicateGuardRunsAndEveryCopyIsHandled() {
        assertThat(handledOfTwoCopies(SubscriptionKind.EXCLUSIVE)).isEqualTo(2);
        assertThat(metrics.duplicatesSuppressed).hasValue(0);
    }
}
