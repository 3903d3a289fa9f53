package dev.settle.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OrderHandlerTest {

    private final OrderHandler handler = new OrderHandler();

    @BeforeEach
    void open() {
        handler.open(context(Map.of()));
    }

    @Test
    void aGoodOrderIsAcknowledged() {
        assertThat(handler.handle(FakeDelivery.firstAttempt("{\"id\": \"o-1\", \"sku\": \"widget\", \"quantity\": 3}")))
                .isSameAs(Outcome.ack());
    }

    @Test
    void aFlakyOrderIsRetriedAtOnceOnItsFirstAttemptAndAcknowledgedOnItsSecond() {
        String flaky = "{\"id\": \"o-2\", \"sku\": \"flaky\", \"quantity\": 1}";

        assertThat(handler.handle(new FakeDelivery(flaky, 1))).isSameAs(Outcome.retry());
        assertThat(handler.handle(new FakeDelivery(flaky, 2))).isSameAs(Outcome.ack());
    }

    @Test
    void aLargeOrderIsRateLimitedOnItsFirstAttemptAndAcknowledgedOnItsSecond() {
        String bulk = "{\"id\": \"o-3\", \"sku\": \"widget\", \"quantity\": 101}";

        assertThat(handler.handle(new FakeDelivery(bulk, 1))).isEqualTo(Outcome.retryAfter(Duration.ofSeconds(2)));
        assertThat(handler.handle(new FakeDelivery(bulk, 2))).isSameAs(Outcome.ack());
    }

    @Test
    void anOrderAtTheRateLimitIsNotHeldBack() {
        assertThat(handler.handle(FakeDelivery.firstAttempt("{\"id\": \"o-4\", \"sku\": \"widget\", \"quantity\": 100}")))
                .isSameAs(Outcome.ack());
    }

    @Test
    void theRateLimitComesFromTheSubscriptionsConfig() {
        OrderHandler strict = new OrderHandler();
        strict.open(context(Map.of("rateLimitedQuantity", "10")));

        assertThat(strict.handle(FakeDelivery.firstAttempt("{\"id\": \"o-5\", \"sku\": \"widget\", \"quantity\": 11}")))
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
        String poison = "{\"id\": \"o-6\", \"sku\": \"poison\", \"quantity\": 1}";

        for (int attempt = 1; attempt <= 5; attempt++) {
            assertThat(handler.handle(new FakeDelivery(poison, attempt))).as("attempt %d", attempt)
                    .isSameAs(Outcome.retry());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "",
        "not json",
        "{\"id\": \"o-7\", \"sku\": \"widget\"}",
        "{\"id\": \"o-7\", \"sku\": \"widget\", \"quantity\": 0}",
        "{\"id\": \"o-7\", \"sku\": \"widget\", \"quantity\": -2}",
        "{\"id\": \"o-7\", \"sku\": \"widget\", \"quantity\": 2.5}",
        "{\"id\": \"o-7\", \"sku\": \"widget\", \"quantity\": \"many\"}",
        "{\"id\": \"o-7\", \"sku\": \"\", \"quantity\": 1}",
        "{\"id\": null, \"sku\": \"widget\", \"quantity\": 1}",
        "{\"id\": \"o-7\", \"sku\": \"widget\", \"quantity\": 1, \"colour\": \"red\"}",
        "{\"id\": \"o-7\", \"id\": \"o-8\", \"sku\": \"widget\", \"quantity\": 1}",
        "{\"id\": \"o-7\", \"sku\": {\"code\": \"widget\"}, \"quantity\": 1}",
        "{\"id\": \"o-7\", \"sku\": \"widget\", \"quantity\": 1} trailing",
        "{\"id\": \"o-7\" \"sku\": \"widget\", \"quantity\": 1}",
        "[\"o-7\", \"widget\", 1]",
    })
    void aMalformedOrderIsDroppedOnAnyAttempt(String payload) {
        assertThat(handler.handle(FakeDelivery.firstAttempt(payload))).isSameAs(Outcome.drop());
        assertThat(handler.handle(new FakeDelivery(payload, 3))).isSameAs(Outcome.drop());
    }

    @Test
    void ordersAreReadFromFlatJsonWithEscapesAndAnyWhitespace() throws MalformedOrderException {
        assertThat(Order.parse(" {\n\t\"quantity\" : 7 ,\"sku\":\"w\\u00efdget \\\"xl\\\"\", \"id\":\"o\\/9\"}\n"))
                .isEqualTo(new Order("o/9", "wïdget \"xl\"", 7));
    }

    @Test
    void aMalformedOrderSaysWhatIsWrong() {
        assertThatThrownBy(() -> Order.parse("{\"id\": \"o-7\", \"sku\": \"widget\"}"))
                .isInstanceOf(MalformedOrderException.class)
                .hasMessage("missing \"quantity\"");
        assertThatThrownBy(() -> Order.parse("{\"id\": \"o-7\" \"sku\": \"widget\"}"))
                .isInstanceOf(MalformedOrderException.class)
                .hasMessage("expected ',' or '}' at character 14");
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
