package ${package};

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.driver.Settled;
import dev.settle.test.SettleTestDriver;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * settle.yaml and the packaged JAR, as {@code settle run} takes them: the manifest validated, the handler found
 * through its services file and loaded in a class loader of its own.
 */
class SettleManifestIT {
    @Test
    void theManifestLoadsThePackagedHandler() throws Exception {
        try (SettleTestDriver settle = SettleTestDriver.fromManifest(Path.of("settle.yaml"), Map.of())) {
            settle.send("Grace");

            assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK);
            assertThat(settle.subscription().spec().deadLetter()).isPresent();
        }
    }
}
