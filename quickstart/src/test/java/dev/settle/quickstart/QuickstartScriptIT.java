package dev.settle.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * {@code ./quickstart.sh} as a newcomer runs it (on free ports here), printing what happens to the orders and
 * nothing of the broker's own: its stack traces at start and stop (BKNoSuchLedgerExistsOnMetadataServerException
 * from the bookie client's metadata loop, the bookie's RejectedExecutionException, OpenTelemetry's and Jersey's
 * notices) showed up in 2 runs of 3 (issue 30, item 4).
 */
// Not on PulsarFixture: ./quickstart.sh starts its own broker, as a newcomer's machine has none.
@ResourceLock(value = CloneOutput.LOCK, mode = ResourceAccessMode.READ_WRITE)
class QuickstartScriptIT {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    @Test
    void theQuickstartPrintsTheOrdersAndNoBrokerStackTrace() throws Exception {
        Path output = Path.of("target", "quickstart-script.txt").toAbsolutePath();
        Process quickstart = new ProcessBuilder("./quickstart.sh", "--exit", "--port", "0", "--http-port", "0")
                .directory(ROOT.toFile())
                .redirectErrorStream(true)
                .redirectOutput(output.toFile())
                .start();
        assertThat(quickstart.waitFor(5, TimeUnit.MINUTES)).isTrue();
        String printed = Files.readString(output, StandardCharsets.UTF_8);

        assertThat(quickstart.exitValue()).as(printed).isZero();
        assertThat(printed)
                .contains("dead-letter topic persistent://public/default/orders-dlq: [o-10, o-20]", "== stopped")
                .doesNotContain("Exception", "\tat ", "WARNING:", "INFO:", "[pulsar-broker]");
    }
}
