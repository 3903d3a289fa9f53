package dev.settle.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

/**
 * The built files a run needs, found from the repository's root (run.sh) or from this module's folder (the
 * integration test), and a fresh folder for this run's manifests and child logs.
 */
record Workspace(Path root, Path runtimeJar, Path handlerJar, String classPath, Path javaCommand, Path work) {

    static Workspace locate() throws IOException {
        Path here = Path.of("").toAbsolutePath();
        Path root = Files.exists(here.resolve("benchmarks/pom.xml")) ? here : here.getParent();
        Path target = root.resolve("benchmarks/target");
        Path runtimeJar = required(root.resolve("runtime/target/settle-runtime.jar"));
        Path handlerJar = required(target.resolve("settle-benchmarks-handlers.jar"));
        String dependencies = Files.readString(required(target.resolve("benchmarks.classpath")))
                .trim();
        String classPath = target.resolve("classes") + java.io.File.pathSeparator + dependencies;
        Path work = target.resolve("bench-work")
                .resolve(LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Files.createDirectories(work);
        return new Workspace(
                root, runtimeJar, handlerJar, classPath, Path.of(System.getProperty("java.home"), "bin", "java"), work);
    }

    private static Path required(Path file) {
        if (!Files.exists(file)) {
            throw new IllegalStateException(file + " is missing: build it first with"
                    + " ./mvnw -B package -DskipTests -pl benchmarks -am (./benchmarks/run.sh does)");
        }
        return file;
    }

    /** {@code java <options> -cp <this module's class path> <main> <args>}. */
    List<String> javaMain(List<String> options, Class<?> main, String... args) {
        List<String> command = new ArrayList<>();
        command.add(javaCommand.toString());
        command.addAll(options);
        command.add("-cp");
        command.add(classPath);
        command.add(main.getName());
        command.addAll(List.of(args));
        return command;
    }

    /** {@code java <options> -jar settle-runtime.jar run <manifest>}: Settle exactly as it is deployed. */
    List<String> settleRun(List<String> options, Path manifest) {
        return settleRun(runtimeJar, options, manifest);
    }

    /** The same with another build of Settle's runtime JAR (one built at a git ref, to compare with). */
    List<String> settleRun(Path jar, List<String> options, Path manifest) {
        List<String> command = new ArrayList<>();
        command.add(javaCommand.toString());
        command.addAll(options);
        command.add("-jar");
        command.add(jar.toString());
        command.add("run");
        command.add(manifest.toString());
        return command;
    }
}
