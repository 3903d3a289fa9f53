package dev.settle.testbroker;

import java.nio.file.Files;
import java.nio.file.Path;

/** The options of the JVMs a test starts that are not the runtime under test: brokers and LocalRunners. */
public final class TestJvm {
    private TestJvm() {}

    /**
     * {@code test-broker/test-jvm.args} as a java {@code @argfile}: the speed options the integration tests' own JVMs
     * run with (C1 only, a code cache of C2's size, no bytecode verification; the file says why). The parent POM gives
     * its path to every integration test JVM as {@code -Dsettle.test.jvmArgs}.
     */
    public static String speedOptions() {
        String file = System.getProperty("settle.test.jvmArgs");
        if (file == null || !Files.isRegularFile(Path.of(file))) {
            throw new IllegalStateException("-Dsettle.test.jvmArgs names no file (" + file + "): it is"
                    + " test-broker/test-jvm.args, which the parent POM's failsafe configuration passes; run the test"
                    + " through Maven or set it");
        }
        return "@" + Path.of(file).toAbsolutePath().normalize();
    }
}
