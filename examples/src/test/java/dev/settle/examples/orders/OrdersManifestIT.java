package dev.settle.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.driver.Settled;
import dev.settle.test.SettleTestDriver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code orders/orders.yaml} on the test kit, after {@code package}: the manifest validated as {@code settle run}
 * validates it, the handler loaded from {@code target/settle-examples.jar} through its services file in its own
 * class loader, as Settle loads it.
 */
// Not on PulsarFixture: the test kit needs no broker.
class OrdersManifestIT {
    @Test
    void theManifestRunsTheJarsHandlerThroughEveryOutcome() throws Exception {
        try (SettleTestDriver settle = SettleTestDriver.fromManifest(Path.of("orders", "orders.yaml"), Map.of())) {
            settle.send(new Order("o-1", "widget", 3));
            settle.send(new Order("o-2", "flaky", 1));
            settle.send(new Order("o-3", "widget", 101));
            settle.send(new Order("o-4", "widget", 0));
            settle.send(new Order("o-5", "poison", 1));
            settle.advance(Duration.ofSeconds(2));

            assertThat(settle.subscription().outcomes())
                    .containsExactly(
                            Settled.ACK,
                            Settled.RETRY,
                            Settled.ACK,
                            Settled.RETRY_AFTER,
                            Settled.DROP,
                            Settled.RETRY,
                            Settled.RETRY,
                            Settled.RETRY,
                            Settled.RETRY,
                            Settled.RETRY,
                            Settled.ACK);
            assertThat(settle.deadLetters()).hasSize(1);
            assertThat(settle.subscription().spec().deadLetter().orElseThrow().maxAttempts())
                    .isEqualTo(5);
        }
    }
}
