package dev.settle.fidelity;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * The JAR both runs load: {@link ScriptedHandler}, {@link ScriptedFunction} and their exceptions, compiled, and the
 * handler's services file (a function is named by the manifest).
 */
final class FidelityJar {
    private FidelityJar() {}

    static Path build(Path jar) throws IOException, URISyntaxException {
        Path classes = Path.of(ScriptedHandler.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        String folder = ScriptedHandler.class.getPackageName().replace('.', '/');
        List<Path> compiled;
        try (Stream<Path> files = Files.list(classes.resolve(folder))) {
            compiled = files.filter(file -> file.getFileName().toString().startsWith("Scripted"))
                    .sorted()
                    .toList();
        }
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream zip = new JarOutputStream(out)) {
            for (Path file : compiled) {
                zip.putNextEntry(new JarEntry(folder + "/" + file.getFileName()));
                zip.write(Files.readAllBytes(file));
                zip.closeEntry();
            }
            zip.putNextEntry(new JarEntry("META-INF/services/dev.settle.sdk.Handler"));
            zip.write((ScriptedHandler.class.getName() + "\n").getBytes(StandardCharsets.UTF_8));
            zip.closeEntry();
        }
        return jar;
    }
}
