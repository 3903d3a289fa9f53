package dev.settle.runtime.cli;

import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.testbroker.PulsarFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The runtime a kill test starts after its kills to work off what they left, in the test's JVM: what it finds is the
 * broker's state, which a {@code settle run} of its own would find the same; the processes killed are what the tests
 * are about. A {@code settle run} spent some 4 s of CPU starting and warming up to work off a few hundred inputs
 * (issue 43). Closed at the end of the test, or before by the test (closing twice is nothing).
 */
final class InThisJvm {
    private InThisJvm() {}

    static Settle start(PulsarFixture pulsar, Path manifest) throws Exception {
        Deployment deployment = pulsar.closeAfterTest(Preflight.check(manifest, Map.of()));
        return pulsar.closeAfterTest(Settle.start(deployment, Duration.ofSeconds(5)));
    }
}
