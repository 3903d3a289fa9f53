package dev.settle.helm;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The chart under {@code helm/settle}, driven through real Helm in the JVM (helm-java's bundled native library):
 * {@code helm lint} and {@code helm template}, no helm binary and no cluster.
 */
final class SettleChart {
    static final String RELEASE = "orders";
    static final String NAMESPACE = "apps";
    /** The full name Helm gives the objects of {@link #RELEASE}. */
    static final String FULLNAME = "orders-settle";
    /** The Kubernetes version templates render for (helm template assumes an old one otherwise). */
    static final String KUBE_VERSION = "1.31.0";

    private SettleChart() {}

    static Path directory() {
        return Path.of(System.getProperty("settle.chart.dir", "settle"))
                .toAbsolutePath()
                .normalize();
    }

    static Path repositoryRoot() {
        return Path.of(System.getProperty("settle.repository.root", ".."))
                .toAbsolutePath()
                .normalize();
    }

    /** The Maven project version, which the chart's appVersion (and so the default image tag) must equal. */
    static String projectVersion() {
        String version = System.getProperty("settle.project.version");
        if (version == null) {
            throw new IllegalStateException("run through Maven: settle.project.version is not set");
        }
        return version;
    }

    /** The scenario files under {@code ci/}, as {@code helm lint} and chart-testing pick them up. */
    static List<Path> scenarios() {
        try (Stream<Path> files = Files.list(directory().resolve("ci"))) {
            return files.filter(file -> file.getFileName().toString().endsWith("-values.yaml"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Path scenario(String name) {
        Path file = directory().resolve("ci").resolve(name + "-values.yaml");
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("no scenario " + file);
        }
        return file;
    }

    static LintResult lint() {
        return new Helm(directory()).lint().strict().call();
    }

    /** Renders with the default values and then each of {@code valuesFiles}, in order. */
    static Rendered render(Path... valuesFiles) {
        TemplateCommand template = template();
        for (Path file : valuesFiles) {
            template.withValuesFile(file);
        }
        return Rendered.parse(template.call());
    }

    /** Renders with the default values overlaid with {@code valuesYaml}. */
    static Rendered render(Path scratch, String valuesYaml) {
        return render(write(scratch, valuesYaml));
    }

    /**
     * Renders with {@code valuesYaml}, which the chart must refuse; returns Helm's error message.
     *
     * @throws AssertionError when the chart renders
     */
    static String refusal(Path scratch, String valuesYaml) {
        TemplateCommand template = template().withValuesFile(write(scratch, valuesYaml));
        try {
            String output = template.call();
            throw new AssertionError("expected the chart to refuse these values, but it rendered:\n" + output);
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
    }

    private static TemplateCommand template() {
        return new Helm(directory())
                .template()
                .withName(RELEASE)
                .withNamespace(NAMESPACE)
                .withKubeVersion(KUBE_VERSION);
    }

    private static Path write(Path scratch, String valuesYaml) {
        try {
            Path file = Files.createTempFile(scratch, "values-", ".yaml");
            Files.writeString(file, valuesYaml, StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
