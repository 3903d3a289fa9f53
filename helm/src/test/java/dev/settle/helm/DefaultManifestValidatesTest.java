package dev.settle.helm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The manifest the default values put into the ConfigMap passes {@code settle validate}: the chart ships a
 * manifest the runtime accepts, not just one Helm can render.
 */
class DefaultManifestValidatesTest {
    /** Where the image (see the Dockerfile) keeps the example handlers that the default values run. */
    private static final String IMAGE_EXAMPLES_JAR = "/opt/settle/examples/settle-examples.jar";

    private static final String ORDER_HANDLER = "dev/settle/examples/orders/OrderHandler.class";

    @TempDir
    Path scratch;

    @Test
    void manifestInTheDefaultValuesPassesSettleValidate() throws IOException {
        Rendered rendered = SettleChart.render();
        Map<String, Object> manifest = rendered.manifest();
        // The pod finds the JAR at its path in the image; here the same JAR comes from the examples module.
        Path examplesJar = examplesJar();
        for (Object entry : Yamls.list(manifest.get("subscriptions"), "subscriptions")) {
            Map<String, Object> subscription = Yamls.map(entry, "a subscription");
            assertThat(subscription).containsEntry("jar", IMAGE_EXAMPLES_JAR);
            subscription.put("jar", examplesJar.toString());
        }
        Path file = scratch.resolve("manifest.yaml");
        Files.writeString(file, Rendered.yaml().dump(manifest), StandardCharsets.UTF_8);

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Main.execute(List.of("validate", file.toString()), print(out), print(err));

        assertThat(exit)
                .as("settle validate %s%nstdout:%n%s%nstderr:%n%s", file, text(out), text(err))
                .isZero();
    }

    /**
     * The settle-examples JAR on the test class path; when the reactor hands over its classes folder instead
     * (a build that stops before package), the same classes packed into a JAR.
     */
    private Path examplesJar() throws IOException {
        URL handler = getClass().getClassLoader().getResource(ORDER_HANDLER);
        assertThat(handler)
                .as("the examples module provides %s (the default values' handler)", ORDER_HANDLER)
                .isNotNull();
        try {
            if ("jar".equals(handler.getProtocol())) {
                String file = handler.getPath();
                return Path.of(new URL(file.substring(0, file.indexOf("!/"))).toURI());
            }
            Path classes = Path.of(handler.toURI());
            for (String ignored : ORDER_HANDLER.split("/")) {
                classes = classes.getParent();
            }
            return pack(classes, scratch.resolve("settle-examples.jar"));
        } catch (URISyntaxException e) {
            throw new IllegalStateException("unexpected class path URL " + handler, e);
        }
    }

    private static Path pack(Path folder, Path jar) throws IOException {
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
                Stream<Path> files = Files.walk(folder)) {
            for (Path file : files.filter(Files::isRegularFile).sorted().toList()) {
                out.putNextEntry(new JarEntry(folder.relativize(file).toString().replace('\\', '/')));
                Files.copy(file, out);
                out.closeEntry();
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        return jar;
    }

    private static PrintStream print(OutputStream out) {
        return new PrintStream(out, true, StandardCharsets.UTF_8);
    }

    private static String text(ByteArrayOutputStream out) {
        return out.toString(StandardCharsets.UTF_8);
    }
}
