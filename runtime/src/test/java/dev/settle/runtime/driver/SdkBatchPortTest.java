package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.BatchHandler;
import dev.settle.sdk.BatchResult;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.Outcome;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.junit.jupiter.api.Test;

class SdkBatchPortTest {
    private final List<List<String>> handed = new ArrayList<>();

    private static UnitOfWork<Message<?>> work(int entry, String value) {
        MessageId id = new MessageIdImpl(1, entry, -1);
        Message<?> message = (Message<?>) Proxy.newProxyInstance(
                Message.class.getClassLoader(),
                new Class<?>[] {Message.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getMessageId" -> id;
                    case "getData" -> value == null ? null : value.getBytes(StandardCharsets.UTF_8);
                    case "getTopicName" -> "persistent://public/default/orders";
                    case "getProperties" -> Map.of();
                    case "hasKey" -> false;
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "toString" -> "message " + id;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
        return new UnitOfWork<>(message, id, 1, false, 0);
    }

    private SdkBatchPort port(java.util.function.Function<List<Delivery<String>>, BatchResult> decide) {
        BatchHandler<String> handler = batch -> {
            handed.add(batch.stream().map(Delivery::value).toList());
            return decide.apply(batch);
        };
        return SdkBatchPort.of(
                handler,
                String.class,
                SubscriptionSpec.builder("orders", List.of("orders")).build());
    }

    @Test
    void eachDeliveryGetsTheOutcomeTheResultGaveItAndOneLeftOutGetsNone() throws Exception {
        SdkBatchPort port = port(batch -> BatchResult.create()
                .retryAfter(batch.get(2), Duration.ofSeconds(1))
                .drop(batch.get(0)));

        List<BatchAnswer> answers = port.call(List.of(work(1, "a"), work(2, "b"), work(3, "c")));

        assertThat(answers)
                .containsExactly(
                        BatchAnswer.of(Outcome.drop()),
                        BatchAnswer.none(),
                        BatchAnswer.of(Outcome.retryAfter(Duration.ofSeconds(1))));
    }

    @Test
    void aPayloadThatCannotBeDecodedFailsAloneAndIsNotHandedToTheHandler() throws Exception {
        SdkBatchPort port = port(BatchResult::acknowledgeAll);

        List<BatchAnswer> answers = port.call(List.of(work(1, "a"), work(2, null), work(3, "c")));

        assertThat(handed).containsExactly(List.of("a", "c"));
        assertThat(answers.get(0)).isEqualTo(BatchAnswer.of(Outcome.ack()));
        assertThat(answers.get(1).failure()).isInstanceOf(PayloadDecodeException.class);
        assertThat(answers.get(2)).isEqualTo(BatchAnswer.of(Outcome.ack()));
    }

    @Test
    void twoOutcomesForOneDeliveryFailTheWholeCallNamingTheHandlerAndTheMessage() throws Exception {
        SdkBatchPort port = port(batch -> BatchResult.acknowledgeAll(batch).retry(batch.get(1)));

        List<BatchAnswer> answers = port.call(List.of(work(1, "a"), work(2, "b")));

        assertThat(answers)
                .allSatisfy(answer -> assertThat(answer.failure())
                        .isInstanceOf(BatchResultRefusedException.class)
                        .hasMessageContaining("batch handler " + SdkBatchPortTest.class.getName())
                        .hasMessageContaining("gave message 1:2:-1 two outcomes (ack, then retry)"));
    }

    @Test
    void anOutcomeForADeliveryNotInTheCallFailsTheWholeCall() throws Exception {
        List<Delivery<String>> earlier = new ArrayList<>();
        SdkBatchPort port = port(batch -> {
            BatchResult result = BatchResult.acknowledgeAll(batch);
            earlier.forEach(result::drop);
            earlier.addAll(batch);
            return result;
        });
        port.call(List.of(work(1, "a")));

        List<BatchAnswer> answers = port.call(List.of(work(1, "a"), work(2, "b")));

        assertThat(answers)
                .allSatisfy(answer -> assertThat(answer.failure())
                        .isInstanceOf(BatchResultRefusedException.class)
                        .hasMessageContaining(
                                "gave an outcome (drop) for a delivery not in this call (message 1:1:-1)"));
    }

    @Test
    void aNullResultFailsTheWholeCallSayingWhatToReturn() throws Exception {
        SdkBatchPort port = port(batch -> null);

        List<BatchAnswer> answers = port.call(List.of(work(1, "a")));

        assertThat(answers.get(0).failure())
                .isInstanceOf(BatchResultRefusedException.class)
                .hasMessageContaining("BatchResult.acknowledgeAll(batch)");
        assertThat(Optional.ofNullable(answers.get(0).outcome())).isEmpty();
    }

    @Test
    void atExactlyOnceADeliverysOutputsAreSentOnlyForAnAckOrDropAndNoneForACallThatThrew() throws Exception {
        List<String> sent = new java.util.concurrent.CopyOnWriteArrayList<>();
        SdkPublisher<String> audit =
                new SdkPublisher<>("audit", String.class, getClass().getClassLoader(), recording(sent));
        boolean[] throwing = {true};
        BatchHandler<String> handler = batch -> {
            batch.forEach(delivery -> audit.publish(delivery, "out " + delivery.value()));
            if (throwing[0]) {
                throw new IllegalStateException("bulk write refused");
            }
            // The fourth is left out: no outcome.
            return BatchResult.create().ack(batch.get(0)).retry(batch.get(1)).drop(batch.get(2));
        };
        SdkBatchPort port = SdkBatchPort.of(
                handler,
                String.class,
                SubscriptionSpec.builder("orders", List.of("orders"))
                        .guarantee(dev.settle.runtime.manifest.Guarantee.EXACTLY_ONCE)
                        .build());
        List<UnitOfWork<Message<?>>> works = List.of(work(1, "a"), work(2, "b"), work(3, "c"), work(4, "d"));

        org.assertj.core.api.Assertions.assertThatThrownBy(() -> port.call(works))
                .hasMessage("bulk write refused");
        assertThat(sent).as("sent by a call that threw").isEmpty();

        throwing[0] = false;
        port.call(works);

        assertThat(sent).containsExactly("out a", "out c");
        assertThat(works.get(0).outputs())
                .hasValueSatisfying(sends -> assertThat(sends.count()).isEqualTo(1));
        assertThat(works.get(1).outputs()).as("a retried delivery's sends").isEmpty();
        assertThat(works.get(3).outputs())
                .as("a delivery left without an outcome")
                .isEmpty();
    }

    /** Outputs whose every send is stored at once, its value added to {@code sent}. */
    private static dev.settle.runtime.publish.Outputs recording(List<String> sent) {
        return new dev.settle.runtime.publish.Outputs() {
            @Override
            @SuppressWarnings("unchecked")
            public <T> org.apache.pulsar.client.api.TypedMessageBuilder<T> newMessage(
                    String topic, org.apache.pulsar.client.api.Schema<T> schema) {
                Object[] value = new Object[1];
                return (org.apache.pulsar.client.api.TypedMessageBuilder<T>) Proxy.newProxyInstance(
                        getClass().getClassLoader(),
                        new Class<?>[] {org.apache.pulsar.client.api.TypedMessageBuilder.class},
                        (proxy, method, args) -> switch (method.getName()) {
                            case "value" -> {
                                value[0] = args[0];
                                yield proxy;
                            }
                            case "sendAsync" -> {
                                sent.add(String.valueOf(value[0]));
                                yield java.util.concurrent.CompletableFuture.completedFuture(
                                        new MessageIdImpl(9, sent.size(), -1));
                            }
                            default -> proxy;
                        });
            }

            @Override
            public void close() {}
        };
    }
}
