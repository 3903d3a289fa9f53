package dev.settle.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.testbroker.PulsarBroker;
import dev.settle.testbroker.PulsarEndpoints;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The quickstart's main path, end to end on a real broker, with the example JAR and manifest as shipped. */
// The shared broker without PulsarFixture: the quickstart takes only its URLs (this module has no Pulsar client).
@ExtendWith(PulsarBroker.class)
class QuickstartIT {

    @Test
    void twentyOrdersMeetEveryOutcomeAndTheSummaryCountsThem(PulsarEndpoints pulsar) throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);

        Summary summary = Quickstart.run(pulsar, 20, out, new CountDownLatch(1), settle -> {});

        System.out.println(printed.toString(StandardCharsets.UTF_8));
        // 12 good, 2 flaky (retried once), 2 rate limited (held 2 s once), 2 invalid (dropped), 2 poison (5 attempts).
        assertThat(summary).isEqualTo(new Summary(32, 16, 12, 2, 2, 0, 0, 2, List.of("o-10", "o-20")));
        assertThat(printed.toString(StandardCharsets.UTF_8))
                .contains("| ack                            |    16 |")
                .contains("== dead-lettered: order o-10")
                .contains("orders-dlq: [o-10, o-20]");
    }
}
