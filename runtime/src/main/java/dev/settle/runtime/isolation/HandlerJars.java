package dev.settle.runtime.isolation;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import java.util.zip.ZipException;

/**
 * What a handler location holds: its JARs, and the handlers they declare in
 * {@code META-INF/services/dev.settle.sdk.Handler}, read without loading a class.
 *
 * <p>The services files are read here rather than through {@link java.util.ServiceLoader}: the loader stops at
 * the first provider it cannot load and its errors name neither the JAR nor what else was declared, while a
 * refusal here must do both. The format is {@code ServiceLoader}'s: one class name a line, {@code #} starts a
 * comment, blanks are ignored, duplicates count once.
 */
final class HandlerJars {

    private final Path location;
    private final boolean folder;
    private final List<Path> jars;
    private final Map<String, Path> declaringJar;
    private final Map<Path, String> versions;

    private HandlerJars(Path location, boolean folder, List<Path> jars, Map<String, Path> declaringJar,
            Map<Path, String> versions) {
        this.location = location;
        this.folder = folder;
        this.jars = List.copyOf(jars);
        this.declaringJar = declaringJar;
        this.versions = versions;
    }

    /**
     * Reads a handler JAR, or every {@code *.jar} directly inside a folder (in name order, which is also the
     * class look-up order).
     */
    static HandlerJars read(Path jarOrFolder) throws HandlerLoadException {
        Path location = jarOrFolder.toAbsolutePath().normalize();
        if (!Files.exists(location)) {
            throw HandlerLoadException.missing(location);
        }
        boolean folder = Files.isDirectory(location);
        List<Path> jars = folder ? jarsIn(location) : List.of(location);
        if (jars.isEmpty()) {
            throw HandlerLoadException.folderWithoutJars(location);
        }
        Map<String, Path> declaringJar = new LinkedHashMap<>();
        Map<Path, String> versions = new LinkedHashMap<>();
        for (Path jar : jars) {
            try (JarFile file = new JarFile(jar.toFile(), false)) {
                for (String className : declaredIn(location, jar, file)) {
                    // The first JAR wins, as it does for class look-up.
                    declaringJar.putIfAbsent(className, jar);
                }
                implementationVersion(file).ifPresent(version -> versions.put(jar, version));
            } catch (ZipException e) {
                throw HandlerLoadException.notAJar(location, jar, e);
            } catch (IOException e) {
                throw HandlerLoadException.unreadable(location, jar, e);
            }
        }
        return new HandlerJars(location, folder, jars, declaringJar, versions);
    }

    /** The JAR or folder, absolute and normalised: the name every message uses. */
    Path location() {
        return location;
    }

    /** The JARs of a folder, or an empty list for a single JAR (messages list them only for a folder). */
    List<Path> jarsOfFolder() {
        return folder ? jars : List.of();
    }

    /** The declared handler class names, in declaration order. */
    List<String> declared() {
        return List.copyOf(declaringJar.keySet());
    }

    /** The Implementation-Version of the JAR that declares {@code className}, if its manifest has one. */
    Optional<String> versionOf(String className) {
        Path jar = declaringJar.get(className);
        return jar == null ? Optional.empty() : Optional.ofNullable(versions.get(jar));
    }

    /** The JARs as class-path URLs. */
    URL[] urls() {
        URL[] urls = new URL[jars.size()];
        for (int i = 0; i < urls.length; i++) {
            try {
                urls[i] = jars.get(i).toUri().toURL();
            } catch (MalformedURLException e) {
                // A path from the default file system always makes a file: URL.
                throw new IllegalStateException("cannot make a URL of " + jars.get(i), e);
            }
        }
        return urls;
    }

    /** A name for the class loader, shown in stack traces: {@code handler:orders.jar}. */
    String loaderName() {
        Path name = location.getFileName();
        return "handler:" + (name == null ? location : name);
    }

    private static List<Path> jarsIn(Path folder) throws HandlerLoadException {
        try (Stream<Path> entries = Files.list(folder)) {
            return entries.filter(Files::isRegularFile)
                    .filter(path -> path.getFileName().toString().endsWith(".jar"))
                    .sorted()
                    .toList();
        } catch (IOException | UncheckedIOException e) {
            throw HandlerLoadException.unreadable(folder, folder, e);
        }
    }

    private static List<String> declaredIn(Path location, Path jar, JarFile file)
            throws IOException, HandlerLoadException {
        JarEntry services = file.getJarEntry(HandlerLoadException.SERVICES_FILE);
        if (services == null) {
            return List.of();
        }
        List<String> names = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(file.getInputStream(services), StandardCharsets.UTF_8))) {
            int lineNumber = 0;
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                lineNumber++;
                int comment = line.indexOf('#');
                String name = (comment >= 0 ? line.substring(0, comment) : line).strip();
                if (name.isEmpty()) {
                    continue;
                }
                if (!isBinaryClassName(name)) {
                    throw HandlerLoadException.badServicesLine(location, jar, lineNumber, line.strip());
                }
                if (!names.contains(name)) {
                    names.add(name);
                }
            }
        }
        return names;
    }

    private static boolean isBinaryClassName(String name) {
        for (String part : name.split("\\.", -1)) {
            if (part.isEmpty() || !Character.isJavaIdentifierStart(part.codePointAt(0))) {
                return false;
            }
            if (!part.codePoints().allMatch(Character::isJavaIdentifierPart)) {
                return false;
            }
        }
        return true;
    }

    private static Optional<String> implementationVersion(JarFile file) throws IOException {
        Manifest manifest = file.getManifest();
        if (manifest == null) {
            return Optional.empty();
        }
        return Optional.ofNullable(manifest.getMainAttributes().getValue(Attributes.Name.IMPLEMENTATION_VERSION));
    }
}
