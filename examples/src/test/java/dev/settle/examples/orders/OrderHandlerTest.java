package dev.settle.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class OrderHandlerTest {

    private final OrderHandler handler = new OrderHandler();

    @BeforeEach
    void open() {
        handler.open(context(Map.of()));
    }

    @Test
    void aGoodOrderIsAcknowledged() {
        assertThat(handler.handle(FakeDelivery.firstAttempt(new Order("o-1", "widget", 3))))
                .isSameAs(Outcome.ack());
    }

    @Test
    void aFlakyOrderIsRetriedAtOnceOnItsFirstAttemptAndAcknowledgedOnItsSecond() {
        Order flaky = new Order("o-2", "flaky", 1);

        assertThat(handler.handle(new FakeDelivery(flaky, 1))).isSameAs(Outcome.retry());
        assertThat(handler.handle(new FakeDelivery(flaky, 2))).isSameAs(Outcome.ack());
    }

    @Test
    void aLargeOrderIsRateLimitedOnItsFirstAttemptAndAcknowledgedOnItsSecond() {
        Order bulk = new Order("o-3", "widget", 101);

        assertThat(handler.handle(new FakeDelivery(bulk, 1))).isEqualTo(Outcome.retryAfter(Duration.ofSeconds(2)));
        assertThat(handler.handle(new FakeDelivery(bulk, 2))).isSameAs(Outcome.ack());
    }

    @Test
    void anOrderAtTheRateLimitIsNotHeldBack() {
        assertThat(handler.handle(FakeDelivery.firstAttempt(new Order("o-4", "widget", 100))))
                .isSameAs(Outcome.ack());
    }

    @Test
    void theRateLimitComesFromTheSubscriptionsConfig() {
        OrderHandler strict = new OrderHandler();
        strict.open(context(Map.of("rateLimitedQuantity", "10")));

        assertThat(strict.handle(FakeDelivery.firstAttempt(new Order("o-5", "widget", 11))))
                .isEqualTo(Outcome.retryAfter(Duration.ofSeconds(2)));
    }

    @Test
    void aRateLimitThatIsNotANumberRefusesToOpen() {
        OrderHandler misconfigured = new OrderHandler();

        assertThatThrownBy(() -> misconfigured.open(context(Map.of("rateLimitedQuantity", "lots"))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("config rateLimitedQuantity must be a whole number, was 'lots'");
    }

    @Test
    void aPoisonOrderIsRetriedOnEveryAttemptSoItReachesTheDeadLetterTopic() {
        Order poison = new Order("o-6", "poison", 1);

        for (int attempt = 1; attempt <= 5; attempt++) {
            assertThat(handler.handle(new FakeDelivery(poison, attempt)))
                    .as("attempt %d", attempt)
                    .isSameAs(Outcome.retry());
        }
    }

    @ParameterizedTest
    @MethodSource("ordersNoAttemptCanFix")
    void anOrderNoAttemptCanFixIsDroppedOnAnyAttempt(Order order) {
        assertThat(handler.handle(FakeDelivery.firstAttempt(order))).isSameAs(Outcome.drop());
        assertThat(handler.handle(new FakeDelivery(order, 3))).isSameAs(Outcome.drop());
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

    private static HandlerContext context(Map<String, String> config) {
        return new HandlerContext() {
            @Override
            public String subscription() {
                return "orders-processor";
            }

            @Override
            public List<String> topics() {
                return List.of("persistent://public/default/orders");
            }

            @Override
            public Map<String, String> config() {
                return config;
            }
        };
    }
}
