package dev.settle.runtime.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import org.apache.pulsar.PulsarVersion;
import picocli.CommandLine.IVersionProvider;

/**
 * {@code settle --version}: Settle's version as the build wrote it into {@code version.properties} (the POM is the
 * one place it is written), the Pulsar client's as that client reports it (the one actually on the class path,
 * not the one we meant to ship), and the Java runtime's, the three things a bug report needs.
 */
final class Versions implements IVersionProvider {
    static final String RESOURCE = "version.properties";

    @Override
    public String[] getVersion() {
        return new String[] {
            "settle " + settle(),
            "pulsar client " + PulsarVersion.getVersion(),
            "java " + System.getProperty("java.version") + " (" + System.getProperty("java.vendor") + ", "
                    + System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version") + ")"
        };
    }

    static String settle() {
        Properties properties = new Properties();
        try (InputStream in = Versions.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the runtime's JAR: a broken build");
            }
            properties.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return properties.getProperty("settle.version");
    }
}
