package dev.settle.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.test.DeadLetterMessage;
import dev.settle.test.Delivered;
import dev.settle.test.SettleTestDriver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The order handler on the test kit, with the settings of {@code orders/orders.yaml}: every outcome, as the runtime
 * settles it and the broker counts it, on a clock the test moves. {@link OrdersManifestIT} runs the manifest itself.
 */
class OrderHandlerTest {
    private static final String TOPIC = "persistent://public/default/orders";
    private static final String DLQ = "persistent://public/default/orders-dlq";

    private SettleTestDriver settle;

    @AfterEach
    void close() {
        if (settle != null) {
            settle.close();
        }
    }

    /** The subscription of orders.yaml. */
    private static SubscriptionSpec.Builder ordersProcessor() {
        return SubscriptionSpec.builder("orders-processor", List.of(TOPIC))
                .ackTimeout(Duration.ofSeconds(30))
                .deadLetter(5, DLQ)
                .config(Map.of("rateLimitedQuantity", "100"));
    }

    private SettleTestDriver start(SubscriptionSpec spec) throws Exception {
        settle = SettleTestDriver.forHandler(new OrderHandler(), Order.class, spec);
        return settle;
    }

    private SettleTestDriver start() throws Exception {
        return start(ordersProcessor().build());
    }

    @Test
    void aGoodOrderIsAcknowledged() throws Exception {
        start().send(new Order("o-1", "widget", 3));

        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome)
                .containsExactly(tuple(1, Settled.ACK));
        assertThat(settle.subscription().unacknowledged()).isZero();
    }

    @Test
    void aFlakyOrderIsRetriedAtOnceOnItsFirstAttemptAndAcknowledgedOnItsSecond() throws Exception {
        start().send(new Order("o-2", "flaky", 1));

        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome, Delivered::at)
                .containsExactly(tuple(1, Settled.RETRY, Duration.ZERO), tuple(2, Settled.ACK, Duration.ZERO));
    }

    @Test
    void aLargeOrderIsRateLimitedOnItsFirstAttemptAndAcknowledgedTwoSecondsLater() throws Exception {
        start().send(new Order("o-3", "widget", 101));
        assertThat(settle.subscription().outcomes()).containsExactly(Settled.RETRY_AFTER);

        settle.advance(Duration.ofMillis(1_999));
        assertThat(settle.deliveries()).hasSize(1);
        settle.advance(Duration.ofMillis(1));

        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome, Delivered::at)
                .containsExactly(
                        tuple(1, Settled.RETRY_AFTER, Duration.ZERO), tuple(2, Settled.ACK, Duration.ofSeconds(2)));
    }

    @Test
    void anOrderAtTheRateLimitIsNotHeldBack() throws Exception {
        start().send(new Order("o-4", "widget", 100));

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK);
    }

    @Test
    void theRateLimitComesFromTheSubscriptionsConfig() throws Exception {
        start(ordersProcessor().config(Map.of("rateLimitedQuantity", "10")).build())
                .send(new Order("o-5", "widget", 11));

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.RETRY_AFTER);
    }

    @Test
    void aRateLimitThatIsNotANumberRefusesToOpen() {
        assertThatThrownBy(() -> start(ordersProcessor()
                        .config(Map.of("rateLimitedQuantity", "lots"))
                        .build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("config rateLimitedQuantity must be a whole number, was 'lots'");
    }

    @Test
    void aPoisonOrderIsHandledFiveTimesThenLandsOnTheDeadLetterTopic() throws Exception {
        String id = start().message(new Order("o-6", "poison", 1))
                .key("o-6")
                .property("source", "shop")
                .send();

        assertThat(settle.deliveries()).extracting(Delivered::attempt).containsExactly(1, 2, 3, 4, 5);
        assertThat(settle.subscription().outcomes()).containsOnly(Settled.RETRY);
        assertThat(settle.deadLetters()).singleElement().satisfies(dead -> {
            assertThat(dead.topic()).isEqualTo(DLQ);
            assertThat(dead.text()).isEqualTo("{\"id\":\"o-6\",\"sku\":\"poison\",\"quantity\":1}");
            assertThat(dead.key()).contains("o-6");
            assertThat(dead.properties())
                    .containsEntry("source", "shop")
                    .containsEntry(DeadLetterMessage.REAL_TOPIC, TOPIC)
                    .containsEntry(DeadLetterMessage.REAL_SUBSCRIPTION, "orders-processor")
                    .containsEntry(DeadLetterMessage.ORIGIN_MESSAGE_ID, id);
        });
        assertThat(settle.metric("settle_dead_lettered_total", "subscription", "orders-processor"))
                .isEqualTo(1);
    }

    @Test
    void aPayloadThatIsNoOrderNeverReachesTheHandlerAndIsDeadLetteredAfterTheFailureBackoff() throws Exception {
        start().send("not json".getBytes(StandardCharsets.UTF_8));

        // The default failure backoff: 100 ms, 200 ms, 400 ms, 800 ms; the fifth attempt is the last.
        settle.advance(Duration.ofMillis(1_500));

        assertThat(settle.deliveries())
                .extracting(Delivered::at)
                .containsExactly(
                        Duration.ZERO,
                        Duration.ofMillis(100),
                        Duration.ofMillis(300),
                        Duration.ofMillis(700),
                        Duration.ofMillis(1_500));
        assertThat(settle.subscription().outcomes()).containsOnly(Settled.ERROR);
        assertThat(settle.deadLetters())
                .singleElement()
                .extracting(DeadLetterMessage::text)
                .isEqualTo("not json");
    }

    @ParameterizedTest
    @MethodSource("ordersNoAttemptCanFix")
    void anOrderNoAttemptCanFixIsDropped(Order order) throws Exception {
        start().send(order);

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.DROP);
        assertThat(settle.deadLetters()).isEmpty();
    }

    // What JSON that decodes but is no order becomes: a missing text member is null, a missing number 0.
    static Stream<Order> ordersNoAttemptCanFix() {
        return Stream.of(
                new Order("o-7", "widget", 0),
                new Order("o-7", "widget", -2),
                new Order("o-7", "", 1),
                new Order("o-7", " ", 1),
                new Order("o-7", null, 1),
                new Order(null, "widget", 1),
                new Order("", "widget", 1),
                // Even a poison or flaky sku: what is wrong with the order is decided first.
                new Order("o-7", "poison", 0),
                new Order(null, "flaky", 1));
    }

    @Test
    void anOrderSaysWhatIsWrongWithIt() {
        assertThat(new Order("o-7", "widget", 0).problem()).contains("\"quantity\" must be at least 1, was 0");
        assertThat(new Order("o-7", null, 3).problem()).contains("\"sku\" is missing");
        assertThat(new Order(" ", "widget", 3).problem()).contains("\"id\" is missing");
        assertThat(new Order("o-1", "widget", 3).problem()).isEmpty();
    }
}
