package dev.settle.runtime;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.testbroker.PulsarFixture;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * A runtime in the test's JVM, as {@code settle run} starts one (preflight, then start), closed at the end of the test
 * or before by the test (closing twice is nothing): for the tests that are not about the process. The kill tests start
 * one after their kills to work off what they left: what it finds is the broker's state, which a {@code settle run} of
 * its own would find the same; a {@code settle run} spent some 4 s of CPU starting and warming up to work off a few
 * hundred inputs (issue 43).
 */
public final class InThisJvm {
    private InThisJvm() {}

    public static Settle start(PulsarFixture pulsar, Path manifest) throws Exception {
        Deployment deployment = pulsar.closeAfterTest(Preflight.check(manifest, Map.of()));
        return pulsar.closeAfterTest(Settle.start(deployment, Duration.ofSeconds(5)));
    }
}
