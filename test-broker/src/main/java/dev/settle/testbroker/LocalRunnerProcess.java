package dev.settle.testbroker;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Pulsar Functions' own runner, {@code org.apache.pulsar.functions.LocalRunner} 4.0.7, running one Java function in
 * thread mode with ATLEAST_ONCE against a given broker, in a JVM of its own: the runner Settle is compared with
 * ({@link #startAll}: several functions, a LocalRunner each, in one JVM).
 *
 * <p>LocalRunner brings the unshaded Pulsar client 4.0.7 and some 230 other JARs, so it never runs on a class path of
 * ours: its class path is resolved by Maven into {@code local-runner.classpath} by the {@code settle-local-runner}
 * module, which a test module that uses this class declares as a test dependency (see {@code local-runner/pom.xml}).
 * The function JAR is loaded by LocalRunner as {@code pulsar-admin functions localrun --jar} would: it must not bundle
 * pulsar-functions-api, LocalRunner provides it.
 *
 * <p>The subscription starts from the earliest message (LocalRunner's default is the latest), as Settle's does, so
 * both runners see a backlog published before they start. Stopping is SIGTERM: LocalRunner's shutdown hook closes the
 * function instance (its consumer and producer) and the client; it does so by interrupting the instance's thread, and
 * logs that thread's {@code InterruptedException} as errors (three stacks) at every stop, which is how 4.0.7 stops.
 */
public final class LocalRunnerProcess implements AutoCloseable {
    static final String CLASS_PATH_RESOURCE = "dev/settle/localrunner/local-runner.classpath";
    private static final String MAIN = "org.apache.pulsar.functions.LocalRunner";
    private static final String MANY_MAIN = "dev.settle.localrunner.LocalRunners";

    /**
     * The function LocalRunner runs.
     *
     * @param jar the function's JAR
     * @param className the class in it that implements {@code Function} (Pulsar's or {@code java.util.function})
     * @param inputs the topics it consumes
     * @param output the topic its return values go to, or null for none
     * @param subscription the subscription on the inputs (Shared, LocalRunner's default type)
     * @param userConfig what {@code context.getUserConfigValue} answers
     * @param config more {@code FunctionConfig} keys, as {@code pulsar-admin} writes them ({@code windowConfig},
     *     {@code customSerdeInputs}, {@code outputSerdeClassName}...): maps, lists, numbers and strings
     * @param arguments more LocalRunner arguments ({@code --stateStorageImplClass}, ...)
     */
    public record Function(
            Path jar,
            String className,
            List<String> inputs,
            String output,
            String subscription,
            Map<String, String> userConfig,
            Map<String, Object> config,
            List<String> arguments) {
        public Function {
            Objects.requireNonNull(jar, "jar");
            Objects.requireNonNull(className, "className");
            inputs = List.copyOf(inputs);
            Objects.requireNonNull(subscription, "subscription");
            userConfig = Map.copyOf(userConfig);
            config = Map.copyOf(config);
            arguments = List.copyOf(arguments);
        }

        /** A function with no more configuration than its user config. */
        public Function(
                Path jar,
                String className,
                List<String> inputs,
                String output,
                String subscription,
                Map<String, String> userConfig) {
            this(jar, className, inputs, output, subscription, userConfig, Map.of(), List.of());
        }
    }

    public final Process process;
    /** Its output, line by line, as it comes. */
    public final List<String> output;

    private final List<Function> functions;
    private final PulsarEndpoints broker;
    private final Path workDir;
    private final ProcessOutput reader;

    private LocalRunnerProcess(
            Process process, List<Function> functions, PulsarEndpoints broker, Path workDir, String label) {
        this.process = process;
        this.functions = List.copyOf(functions);
        this.broker = broker;
        this.workDir = workDir;
        reader = new ProcessOutput(process, label);
        output = reader.lines;
    }

    /**
     * Starts LocalRunner on {@code function} against {@code broker}, its output collected line by line in
     * {@link #output} and echoed with {@code label}. It is running once {@link #awaitSubscribed} returns.
     */
    public static LocalRunnerProcess start(
            PulsarEndpoints broker, Function function, List<String> jvmOptions, String label) throws IOException {
        Path workDir = Files.createTempDirectory("settle-local-runner-");
        Process process = new ProcessBuilder(command(broker, function, jvmOptions, workDir))
                .redirectErrorStream(true)
                .start();
        return new LocalRunnerProcess(process, List.of(function), broker, workDir, label);
    }

    /**
     * Starts {@code functions} under LocalRunner in one JVM, each in a LocalRunner of its own configured as
     * {@link #start} configures one ({@code dev.settle.localrunner.LocalRunners}, beside the class path in
     * {@code settle-local-runner}): for a test that compares many functions, whose LocalRunner JVMs would each spend
     * 4-5 s of CPU starting. It is running once {@link #awaitSubscribed} returns.
     */
    public static LocalRunnerProcess startAll(
            PulsarEndpoints broker, List<Function> functions, List<String> jvmOptions, String label)
            throws IOException {
        if (functions.isEmpty()) {
            throw new IllegalArgumentException("no function to run under LocalRunner");
        }
        Path workDir = Files.createTempDirectory("settle-local-runner-");
        List<String> command = java(jvmOptions, workDir, classPath() + java.io.File.pathSeparator + ownJar());
        command.add(MANY_MAIN);
        for (int i = 0; i < functions.size(); i++) {
            if (i > 0) {
                command.add("--next");
            }
            command.addAll(arguments(broker, functions.get(i)));
        }
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        return new LocalRunnerProcess(process, functions, broker, workDir, label);
    }

    /**
     * The command that runs LocalRunner on {@code function}, for a caller that starts and watches the process itself
     * (the benchmarks do, to read its CPU time). LocalRunner's temporary files and its Log4j configuration go to
     * {@code workDir}; its log keeps warnings and errors, or the level in {@code -Dsettle.localrunner.logLevel}.
     */
    public static List<String> command(PulsarEndpoints broker, Function function, List<String> jvmOptions, Path workDir)
            throws IOException {
        List<String> command = java(jvmOptions, workDir, classPath());
        command.add(MAIN);
        command.addAll(arguments(broker, function));
        return command;
    }

    /** A JVM on {@code classPath}, its temporary files and Log4j configuration in {@code workDir}; no main yet. */
    private static List<String> java(List<String> jvmOptions, Path workDir, String classPath) throws IOException {
        Path log4j = workDir.resolve("log4j2.properties");
        Files.writeString(
                log4j,
                String.join(
                        "\n",
                        "status = error",
                        "appender.console.type = Console",
                        "appender.console.name = console",
                        "appender.console.layout.type = PatternLayout",
                        "appender.console.layout.pattern = %d{HH:mm:ss.SSS} [local-runner] %-5level %logger{1} - %msg%n",
                        "rootLogger.level = " + System.getProperty("settle.localrunner.logLevel", "warn"),
                        "rootLogger.appenderRef.console.ref = console",
                        ""));
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-Djava.io.tmpdir=" + workDir);
        command.add("-Dlog4j2.configurationFile=" + log4j);
        command.add("-cp");
        command.add(classPath);
        return command;
    }

    /** LocalRunner's arguments for {@code function}. */
    private static List<String> arguments(PulsarEndpoints broker, Function function) {
        List<String> command = new ArrayList<>();
        command.addAll(List.of("--functionConfig", functionConfig(function)));
        command.addAll(List.of("--brokerServiceUrl", broker.serviceUrl()));
        command.addAll(List.of("--webServiceUrl", broker.adminUrl()));
        // Thread mode: the function runs in LocalRunner's own JVM (process mode would start yet another one).
        command.addAll(List.of("--runtime", "THREAD"));
        command.addAll(function.arguments());
        return command;
    }

    /** LocalRunner's {@code --functionConfig}: a {@code FunctionConfig} as JSON, as {@code pulsar-admin} writes it. */
    static String functionConfig(Function function) {
        Map<String, Object> config = new LinkedHashMap<>();
        config.put("tenant", "public");
        config.put("namespace", "default");
        config.put("name", function.subscription());
        config.put("className", function.className());
        config.put("jar", function.jar().toAbsolutePath().toString());
        config.put("runtime", "JAVA");
        config.put("inputs", function.inputs());
        if (function.output() != null) {
            config.put("output", function.output());
        }
        config.put("subName", function.subscription());
        config.put("subscriptionPosition", "Earliest");
        config.put("processingGuarantees", "ATLEAST_ONCE");
        config.put("parallelism", 1);
        config.put("userConfig", function.userConfig());
        config.putAll(function.config());
        return json(config);
    }

    private static String json(Object value) {
        if (value instanceof Map<?, ?> map) {
            return map.entrySet().stream()
                    .map(entry -> json(entry.getKey()) + ":" + json(entry.getValue()))
                    .collect(Collectors.joining(",", "{", "}"));
        }
        if (value instanceof List<?> list) {
            return list.stream().map(LocalRunnerProcess::json).collect(Collectors.joining(",", "[", "]"));
        }
        if (value instanceof Number) {
            return value.toString();
        }
        StringBuilder quoted = new StringBuilder("\"");
        for (char c : value.toString().toCharArray()) {
            if (c == '"' || c == '\\') {
                quoted.append('\\').append(c);
            } else if (c < 0x20) {
                quoted.append(String.format("\\u%04x", (int) c));
            } else {
                quoted.append(c);
            }
        }
        return quoted.append('"').toString();
    }

    /** Where {@code settle-local-runner} keeps LocalRunner's class path; refused when that module is not on ours. */
    private static java.net.URL classPathResource() {
        java.net.URL resource = LocalRunnerProcess.class.getClassLoader().getResource(CLASS_PATH_RESOURCE);
        if (resource == null) {
            throw new IllegalStateException(CLASS_PATH_RESOURCE + " is not on the class path: add"
                    + " dev.settle:settle-local-runner as a test dependency of this module and build it with -am");
        }
        return resource;
    }

    /** LocalRunner 4.0.7's class path, as {@code settle-local-runner} resolved it. */
    static String classPath() throws IOException {
        try (InputStream in = classPathResource().openStream()) {
            String classPath = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            for (String entry : classPath.split(java.io.File.pathSeparator)) {
                if (!Files.exists(Path.of(entry))) {
                    throw new IllegalStateException(CLASS_PATH_RESOURCE + " names " + entry + ", which is not there:"
                            + " rebuild settle-local-runner against this machine's Maven repository");
                }
            }
            return classPath;
        }
    }

    /**
     * The JAR (or, in an IDE, the folder) of {@code settle-local-runner}, which holds both the class path and
     * {@code LocalRunners}: added to that class path, never to ours.
     */
    static String ownJar() throws IOException {
        java.net.URL resource = classPathResource();
        if (resource.getProtocol().equals("jar")) {
            return Path.of(URI.create(((java.net.JarURLConnection) resource.openConnection())
                            .getJarFileURL()
                            .toString()))
                    .toString();
        }
        Path file = Path.of(URI.create(resource.toString()));
        for (int i = 0; i < CLASS_PATH_RESOURCE.split("/").length; i++) {
            file = file.getParent();
        }
        return file.toString();
    }

    /**
     * Waits until each function's subscription is on every input topic with a consumer connected (asked of the
     * broker's admin API), or fails with LocalRunner's last lines.
     */
    public void awaitSubscribed(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Map.Entry<String, String>> waiting = new ArrayList<>();
        for (Function function : functions) {
            function.inputs().forEach(topic -> waiting.add(Map.entry(function.subscription(), topic)));
        }
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        "LocalRunner exited with " + process.exitValue() + " before subscribing; " + lastLines());
            }
            waiting.removeIf(entry -> subscribed(entry.getKey(), entry.getValue()));
            if (waiting.isEmpty()) {
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("LocalRunner did not subscribe (subscription=topic) " + waiting + " within "
                + timeout + "; " + lastLines());
    }

    private boolean subscribed(String subscription, String topic) {
        // The topic's stats list each subscription with its consumers, the first "consumers" after the subscription's
        // name being its own; a subscription LocalRunner has made and left shows "consumers":[].
        String path = topic.replaceFirst("^(persistent|non-persistent)://", "$1/");
        if (path.equals(topic)) {
            path = "persistent/public/default/" + topic;
        }
        try {
            HttpResponse<String> stats = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create(broker.adminUrl() + "/admin/v2/" + path + "/stats"))
                                    .timeout(Duration.ofSeconds(5))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            if (stats.statusCode() != 200) {
                return false;
            }
            String body = stats.body();
            int at = body.indexOf("\"" + subscription + "\":{");
            int consumers = at < 0 ? -1 : body.indexOf("\"consumers\":[", at);
            return consumers >= 0 && body.charAt(consumers + "\"consumers\":[".length()) != ']';
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private String lastLines() {
        List<String> lines = List.copyOf(output);
        return "its last lines:\n  " + String.join("\n  ", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    }

    /** SIGTERM, then up to 30 s for LocalRunner's shutdown hook to close the function; true if it exited. */
    public boolean stop() throws InterruptedException {
        process.toHandle().destroy();
        boolean exited = process.waitFor(30, TimeUnit.SECONDS);
        if (exited) {
            reader.awaitEnd(5_000);
        }
        return exited;
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive() && !stop()) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        EmbeddedPulsar.deleteRecursively(workDir);
    }
}
