package ${package};

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.driver.Settled;
import dev.settle.test.Published;
import dev.settle.test.SettleTestDriver;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * settle.yaml and the packaged JAR, as {@code settle run} takes them: the manifest validated, the function loaded
 * from the JAR in a class loader of its own, its return value published to the manifest's output.
 */
class SettleManifestIT {
    @Test
    void theManifestLoadsThePackagedFunctionAndPublishesToItsOutput() throws Exception {
        try (SettleTestDriver settle = SettleTestDriver.fromManifest(Path.of("settle.yaml"), Map.of())) {
            settle.send("Grace");

            assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK);
            assertThat(settle.outputs("${outputTopic}")).extracting(Published::value).containsExactly("hello, Grace");
            assertThat(settle.subscription().spec().deadLetter()).isPresent();
        }
    }
}
