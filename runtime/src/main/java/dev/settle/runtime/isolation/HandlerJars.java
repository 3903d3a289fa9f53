package dev.settle.runtime.isolation;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.jar.Attributes;
import java.util.stream.Stream;
import java.util.zip.ZipException;

/**
 * What a handler location holds: its JARs, and the handlers they declare in
 * {@code META-INF/services/dev.settle.sdk.Handler}, read without loading a class.
 *
 * <p>The services files are read here rather than through {@link java.util.ServiceLoader}: the loader stops at
 * the first provider it cannot load and its errors name neither the JAR nor what else was declared, while a
 * refusal here must do both. The format is {@code ServiceLoader}'s: one class name a line, {@code #} starts a
 * comment, blanks are ignored, duplicates count once. Every entry is read through {@link BoundedZip}, within
 * {@link JarLimits}.
 */
final class HandlerJars {

    private final Path location;
    private final boolean folder;
    private final List<Path> jars;
    private final Map<String, List<Path>> declaringJars;
    private final Map<Path, String> versions;

    private HandlerJars(
            Path location,
            boolean folder,
            List<Path> jars,
            Map<String, List<Path>> declaringJars,
            Map<Path, String> versions) {
        this.location = location;
        this.folder = folder;
        this.jars = List.copyOf(jars);
        this.declaringJars = declaringJars;
        this.versions = versions;
    }

    /**
     * Reads a handler JAR, or every {@code *.jar} directly inside a folder (in name order, which is also the
     * class look-up order).
     */
    static HandlerJars read(Path jarOrFolder, JarLimits limits) throws HandlerLoadException {
        Path location = jarOrFolder.toAbsolutePath().normalize();
        if (!Files.exists(location)) {
            throw HandlerLoadException.missing(location);
        }
        // A named pipe would block the zip reader until something writes to it, that is forever.
        if (!Files.isRegularFile(location) && !Files.isDirectory(location)) {
            throw HandlerLoadException.notAFileOrFolder(location);
        }
        boolean folder = Files.isDirectory(location);
        List<Path> jars = folder ? jarsIn(location) : List.of(location);
        if (jars.isEmpty()) {
            throw HandlerLoadException.folderWithoutJars(location);
        }
        Map<String, List<Path>> declaringJars = new LinkedHashMap<>();
        Map<Path, String> versions = new LinkedHashMap<>();
        for (Path jar : jars) {
            try (BoundedZip file = BoundedZip.open(jar, limits)) {
                for (String className : declaredIn(location, jar, file)) {
                    declaringJars
                            .computeIfAbsent(className, name -> new ArrayList<>())
                            .add(jar);
                }
                implementationVersion(file).ifPresent(version -> versions.put(jar, version));
            } catch (ZipException e) {
                throw HandlerLoadException.notAJar(location, jar, e);
            } catch (JarLimitException e) {
                throw HandlerLoadException.jarLimit(location, e);
            } catch (IOException e) {
                throw HandlerLoadException.unreadable(location, jar, e);
            }
        }
        return new HandlerJars(location, folder, jars, declaringJars, versions);
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
        return List.copyOf(declaringJars.keySet());
    }

    /** The JARs that declare {@code className}, in look-up order; more than one is a mistake. */
    List<Path> declaringJars(String className) {
        return List.copyOf(declaringJars.getOrDefault(className, List.of()));
    }

    /** The Implementation-Version of the JAR that declares {@code className}, if its manifest has one. */
    Optional<String> versionOf(String className) {
        List<Path> declaring = declaringJars.getOrDefault(className, List.of());
        return declaring.isEmpty() ? Optional.empty() : Optional.ofNullable(versions.get(declaring.get(0)));
    }

    /**
     * The {@code Implementation-Version} of the first JAR holding {@code entry} (a class file's name), such as a
     * function that no services file declares.
     */
    Optional<String> versionOfEntry(String entry, JarLimits limits) {
        for (Path jar : jars) {
            try (BoundedZip zip = BoundedZip.open(jar, limits)) {
                if (zip.contains(entry)) {
                    return Optional.ofNullable(versions.get(jar));
                }
            } catch (java.io.IOException unreadable) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** The JARs, in look-up order. */
    List<Path> jars() {
        return jars;
    }

    /** A name for the class loader, shown in stack traces: {@code handler:orders.jar}. */
    String loaderName() {
        Path name = location.getFileName();
        return "handler:" + (name == null ? location : name);
    }

    private static List<Path> jarsIn(Path folder) throws HandlerLoadException {
        try (Stream<Path> entries = Files.list(folder)) {
            // Regular files only, links followed: a pipe named x.jar is skipped, not read.
            return entries.filter(Files::isRegularFile)
                    .filter(path -> path.getFileName().toString().endsWith(".jar"))
                    .sorted()
                    .toList();
        } catch (IOException | UncheckedIOException e) {
            throw HandlerLoadException.unreadable(folder, folder, e);
        }
    }

    /** The handlers {@code jar} declares, then its batch handlers (issue 47): both are handlers to choose from. */
    private static List<String> declaredIn(Path location, Path jar, BoundedZip file)
            throws IOException, HandlerLoadException {
        List<String> handlers = declaredIn(location, jar, file, HandlerLoadException.SERVICES_FILE);
        List<String> batchHandlers = declaredIn(location, jar, file, HandlerLoadException.BATCH_SERVICES_FILE);
        if (batchHandlers.isEmpty()) {
            return handlers;
        }
        Set<String> all = new LinkedHashSet<>(handlers);
        all.addAll(batchHandlers);
        return List.copyOf(all);
    }

    private static List<String> declaredIn(Path location, Path jar, BoundedZip file, String servicesFile)
            throws IOException, HandlerLoadException {
        Optional<byte[]> services = file.read(servicesFile);
        if (services.isEmpty()) {
            return List.of();
        }
        // A set, in declaration order: a list's contains() made 50 000 names take 4.6 s (issue 32).
        Set<String> names = new LinkedHashSet<>();
        List<String> lines =
                new String(services.get(), StandardCharsets.UTF_8).lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            int comment = line.indexOf('#');
            String name = (comment >= 0 ? line.substring(0, comment) : line).strip();
            if (name.isEmpty()) {
                continue;
            }
            if (!isBinaryClassName(name)) {
                throw HandlerLoadException.badServicesLine(location, jar, servicesFile, i + 1, line.strip());
            }
            names.add(name);
        }
        return List.copyOf(names);
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

    private static Optional<String> implementationVersion(BoundedZip file) {
        return file.manifest()
                .map(manifest -> manifest.getMainAttributes().getValue(Attributes.Name.IMPLEMENTATION_VERSION));
    }
}
