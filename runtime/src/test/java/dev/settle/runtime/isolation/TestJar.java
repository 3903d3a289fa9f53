package dev.settle.runtime.isolation;

import dev.settle.sdk.Handler;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Builds a real handler JAR at test time: compiles Java sources against the SDK (and SLF4J) with the JDK's
 * compiler, and packs the classes, resources and a services file, as Kafka Connect's {@code TestPlugins} does
 * for plugins. Nothing of these JARs is on the test class path.
 */
public final class TestJar {

    private final Path target;
    private final Map<String, String> sources = new LinkedHashMap<>();
    private final Map<String, byte[]> resources = new LinkedHashMap<>();
    private final List<Path> compileClassPath = new ArrayList<>();
    /** Library JARs whose classes are packed into this one. */
    private final List<Path> bundled = new ArrayList<>();

    private String version;

    private TestJar(Path target) {
        this.target = target;
    }

    /**
     * Builds, at {@code target}, the JAR the manifest examples of the tests name: one handler,
     * {@code com.acme.orders.OrderHandler}, taking {@code com.acme.orders.Order} (decoded as JSON), version 1.0.0.
     */
    public static Path orderHandler(Path target) {
        return at(target)
                .source("com.acme.orders.Order", """
                        package com.acme.orders;
                        public class Order {
                            public String id;
                            public int quantity;
                        }
                        """)
                .source("com.acme.orders.OrderHandler", """
                        package com.acme.orders;
                        import dev.settle.sdk.*;
                        public class OrderHandler implements Handler<Order> {
                            @Override public Outcome handle(Delivery<Order> delivery) { return Outcome.ack(); }
                        }
                        """)
                .services("com.acme.orders.OrderHandler")
                .implementationVersion("1.0.0")
                .build();
    }

    /**
     * Builds, at {@code target}, a batch handler JAR: {@code com.acme.orders.BulkWriter}, a {@code BatchHandler<String>}
     * declared in {@code META-INF/services/dev.settle.sdk.BatchHandler}, version 1.0.0.
     */
    public static Path bulkHandler(Path target) {
        return at(target)
                .source("com.acme.orders.BulkWriter", """
                        package com.acme.orders;
                        import dev.settle.sdk.*;
                        import java.util.List;
                        public class BulkWriter implements BatchHandler<String> {
                            @Override public BatchResult handle(List<Delivery<String>> batch) {
                                return BatchResult.acknowledgeAll(batch);
                            }
                        }
                        """)
                .resource(HandlerLoadException.BATCH_SERVICES_FILE, "com.acme.orders.BulkWriter\n")
                .implementationVersion("1.0.0")
                .build();
    }

    /**
     * Builds, at {@code target}, the function JAR the manifest examples of the tests name: a Pulsar Function
     * {@code com.acme.EnrichFunction} (String to String), a windowed function {@code com.acme.JoinWindow} (a window
     * of Strings to one String), and {@code com.acme.Order}, which is no function. Version 2.0.0.
     */
    public static Path functions(Path target) {
        return at(target)
                .source("com.acme.EnrichFunction", """
                        package com.acme;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class EnrichFunction implements Function<String, String> {
                            @Override public String process(String input, Context context) {
                                return input + " from " + context.getUserConfigValueOrDefault("region", "nowhere");
                            }
                        }
                        """)
                .source("com.acme.JoinWindow", """
                        package com.acme;
                        import java.util.Collection;
                        import java.util.function.Function;
                        public class JoinWindow implements Function<Collection<String>, String> {
                            @Override public String apply(Collection<String> window) {
                                return String.join(",", window);
                            }
                        }
                        """)
                .source("com.acme.Order", """
                        package com.acme;
                        public class Order {
                            public String id;
                        }
                        """)
                .implementationVersion("2.0.0")
                .build();
    }

    /**
     * Builds, at {@code target}, a JAR whose {@code com.acme.CountingFunction} keeps a counter in the function state
     * Settle does not serve ({@code context.incrCounter}).
     */
    public static Path countingFunction(Path target) {
        return at(target).source("com.acme.CountingFunction", """
                        package com.acme;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class CountingFunction implements Function<String, Void> {
                            @Override public Void process(String word, Context context) {
                                context.incrCounter(word, 1);
                                return null;
                            }
                        }
                        """).build();
    }

    /**
     * Builds, at {@code target}, a JAR of several functions as starter projects hold them: {@code
     * com.acme.Exclamation} (uses nothing Settle lacks), {@code com.acme.WordCount} (calls {@code incrCounter}
     * itself) and {@code com.acme.AdminReport} (reaches {@code com.acme.Admin}, which calls {@code getPulsarClientBuilder}
     * on one path).
     */
    public static Path starterFunctions(Path target) {
        return at(target)
                .source("com.acme.Exclamation", """
                        package com.acme;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class Exclamation implements Function<String, String> {
                            @Override public String process(String input, Context context) { return input + "!"; }
                        }
                        """)
                .source("com.acme.WordCount", """
                        package com.acme;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class WordCount implements Function<String, Void> {
                            @Override public Void process(String input, Context context) {
                                for (String word : input.split(" ")) {
                                    context.incrCounter(word, 1);
                                }
                                return null;
                            }
                        }
                        """)
                .source("com.acme.Admin", """
                        package com.acme;
                        import org.apache.pulsar.functions.api.Context;
                        final class Admin {
                            static String report(Context context, String input) {
                                return input.equals("admin") ? String.valueOf(context.getPulsarClientBuilder()) : input;
                            }
                        }
                        """)
                .source("com.acme.AdminReport", """
                        package com.acme;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class AdminReport implements Function<String, String> {
                            @Override public String process(String input, Context context) {
                                return Admin.report(context, input);
                            }
                        }
                        """)
                .build();
    }

    /**
     * Builds, at {@code target}, a function JAR with SerDes of its own: {@code com.acme.Shout} (String to String),
     * {@code com.acme.ReversedSerDe} (a {@code SerDe<String>} writing the text reversed) and
     * {@code com.acme.NotASerDe}.
     */
    public static Path serdeFunction(Path target) {
        return at(target)
                .source("com.acme.Shout", """
                        package com.acme;
                        public class Shout implements java.util.function.Function<String, String> {
                            @Override public String apply(String input) { return input.toUpperCase(); }
                        }
                        """)
                .source("com.acme.ReversedSerDe", """
                        package com.acme;
                        import java.nio.charset.StandardCharsets;
                        import org.apache.pulsar.functions.api.SerDe;
                        public class ReversedSerDe implements SerDe<String> {
                            @Override public String deserialize(byte[] input) {
                                return new StringBuilder(new String(input, StandardCharsets.UTF_8)).reverse().toString();
                            }
                            @Override public byte[] serialize(String input) {
                                return new StringBuilder(input).reverse().toString().getBytes(StandardCharsets.UTF_8);
                            }
                        }
                        """)
                .source("com.acme.NotASerDe", """
                        package com.acme;
                        public class NotASerDe {}
                        """)
                .build();
    }

    /**
     * Builds, at {@code target}, a function JAR that bundles a class of its own in the Functions API's package, as a
     * JAR built without {@code provided} scope bundles the whole API: {@code com.acme.EchoFunction}.
     */
    public static Path functionBundlingTheApi(Path target) {
        return at(target)
                .source("com.acme.EchoFunction", """
                        package com.acme;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class EchoFunction implements Function<String, String> {
                            @Override public String process(String input, Context context) { return input; }
                        }
                        """)
                .source("org.apache.pulsar.functions.api.BundledCopy", """
                        package org.apache.pulsar.functions.api;
                        public class BundledCopy {}
                        """)
                .build();
    }

    /** A JAR to be written at {@code target}. */
    public static TestJar at(Path target) {
        return new TestJar(target);
    }

    /** Compiles and packs a class; {@code className} names its file, the source declares its package. */
    public TestJar source(String className, String code) {
        sources.put(className, code);
        return this;
    }

    public TestJar resource(String name, String content) {
        resources.put(name, content.getBytes(StandardCharsets.UTF_8));
        return this;
    }

    /** Declares handlers in {@code META-INF/services/dev.settle.sdk.Handler}, one line each, as written. */
    public TestJar services(String... lines) {
        return resource(HandlerLoadException.SERVICES_FILE, String.join("\n", lines) + "\n");
    }

    /** Compiles against a library JAR without packing it (it must come from elsewhere at run time). */
    public TestJar compiledAgainst(Path jar) {
        compileClassPath.add(jar);
        return this;
    }

    /**
     * Compiles against a library JAR and packs its classes and resources into this one, as a fat (shaded) JAR
     * bundles its dependencies; the library's {@code META-INF} stays out.
     */
    public TestJar bundling(Path jar) {
        compileClassPath.add(jar);
        bundled.add(jar);
        return this;
    }

    public TestJar implementationVersion(String value) {
        this.version = value;
        return this;
    }

    public Path build() {
        try {
            Path work = Files.createTempDirectory(target.getParent(), "build-");
            Path classes = work.resolve("classes");
            Files.createDirectories(classes);
            if (!sources.isEmpty()) {
                compile(work.resolve("src"), classes);
            }
            pack(classes);
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The classes each set of sources compiled to in this JVM, by {@link #compileKey}: the tests build the same
     * handler JARs again and again (the order handler, the fixtures' handlers), and javac was 14% of the Java samples
     * of the runtime integration tests' own threads (4% of their JVM's, issue 43). A JAR is still built
     * and packed each time; only the compiler's output is reused, for the same sources against the same class path.
     */
    private static final Map<String, Map<String, byte[]>> COMPILED = new ConcurrentHashMap<>();

    private void compile(Path sourceRoot, Path classes) throws IOException {
        List<Path> classPath = compileClassPath();
        String key = compileKey(classPath);
        Map<String, byte[]> compiled = COMPILED.get(key);
        if (compiled == null) {
            javac(sourceRoot, classes, classPath);
            compiled = new LinkedHashMap<>();
            try (Stream<Path> files = Files.walk(classes)) {
                for (Path file : files.filter(Files::isRegularFile).toList()) {
                    compiled.put(classes.relativize(file).toString(), Files.readAllBytes(file));
                }
            }
            COMPILED.putIfAbsent(key, compiled);
            return;
        }
        for (Map.Entry<String, byte[]> file : compiled.entrySet()) {
            Path copy = classes.resolve(file.getKey());
            Files.createDirectories(copy.getParent());
            Files.write(copy, file.getValue());
        }
    }

    private List<Path> compileClassPath() {
        List<Path> classPath = new ArrayList<>(compileClassPath);
        classPath.add(codeSourceOf(Handler.class));
        classPath.add(codeSourceOf(org.slf4j.Logger.class));
        // Functions compile against the Functions API and the client API it exposes, as they do in their builds.
        classPath.add(codeSourceOf(org.apache.pulsar.functions.api.Function.class));
        classPath.add(codeSourceOf(org.apache.pulsar.client.api.Schema.class));
        return classPath;
    }

    /**
     * The sources and what they compile against: a library JAR by its path, size and time, as a test may write
     * another one at the same path (a second version of a library) and compile against it.
     */
    private String compileKey(List<Path> classPath) throws IOException {
        StringBuilder key = new StringBuilder();
        for (Path entry : classPath) {
            key.append(entry).append('\0');
            if (Files.isRegularFile(entry)) {
                key.append(Files.size(entry))
                        .append('\0')
                        .append(Files.getLastModifiedTime(entry).toMillis());
            }
            key.append('\n');
        }
        sources.forEach(
                (name, code) -> key.append(name).append('\0').append(code).append('\n'));
        return key.toString();
    }

    private void javac(Path sourceRoot, Path classes, List<Path> classPath) throws IOException {
        List<Path> files = new ArrayList<>();
        for (Map.Entry<String, String> source : sources.entrySet()) {
            Path file = sourceRoot.resolve(source.getKey().replace('.', '/') + ".java");
            Files.createDirectories(file.getParent());
            Files.writeString(file, source.getValue());
            files.add(file);
        }
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager fileManager =
                compiler.getStandardFileManager(diagnostics, null, StandardCharsets.UTF_8)) {
            List<String> options = new ArrayList<>();
            if (Runtime.version().feature() > 17) {
                // Class files a Java 17 runtime loads. On 17 itself javac's default is the same, and --release would
                // open the JDK's ct.sym as a zip file system at each compile: a tenth of the runtime integration tests'
                // JVM's Java samples went to these compiles, half of it to that (issue 43).
                options.addAll(List.of("--release", "17"));
            }
            options.addAll(List.of(
                    "-proc:none",
                    "-nowarn",
                    "-d",
                    classes.toString(),
                    "-classpath",
                    classPath.stream()
                            .map(Path::toString)
                            .collect(Collectors.joining(System.getProperty("path.separator")))));
            boolean compiled = compiler.getTask(
                            null,
                            fileManager,
                            diagnostics,
                            options,
                            null,
                            fileManager.getJavaFileObjectsFromPaths(files))
                    .call();
            if (!compiled) {
                throw new IllegalStateException("test sources do not compile: " + diagnostics.getDiagnostics());
            }
        }
    }

    private void pack(Path classes) throws IOException {
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        if (version != null) {
            manifest.getMainAttributes().put(Attributes.Name.IMPLEMENTATION_VERSION, version);
        }
        try (OutputStream out = Files.newOutputStream(target);
                JarOutputStream jar = new JarOutputStream(out, manifest);
                Stream<Path> compiled = Files.walk(classes)) {
            for (Path file : compiled.filter(Files::isRegularFile).sorted().toList()) {
                jar.putNextEntry(
                        new JarEntry(classes.relativize(file).toString().replace('\\', '/')));
                Files.copy(file, jar);
                jar.closeEntry();
            }
            java.util.Set<String> written = new java.util.HashSet<>();
            for (Path library : bundled) {
                try (java.util.zip.ZipFile zip = new java.util.zip.ZipFile(library.toFile())) {
                    for (var entry : java.util.Collections.list(zip.entries())) {
                        if (entry.isDirectory()
                                || entry.getName().startsWith("META-INF/")
                                || !written.add(entry.getName())) {
                            continue;
                        }
                        jar.putNextEntry(new JarEntry(entry.getName()));
                        try (var in = zip.getInputStream(entry)) {
                            in.transferTo(jar);
                        }
                        jar.closeEntry();
                    }
                }
            }
            for (Map.Entry<String, byte[]> resource : resources.entrySet()) {
                jar.putNextEntry(new JarEntry(resource.getKey()));
                jar.write(resource.getValue());
                jar.closeEntry();
            }
        }
    }

    /** The JAR or class folder a class was loaded from; the SDK is a folder when built in the reactor. */
    static Path codeSourceOf(Class<?> type) {
        try {
            return Path.of(
                    type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
