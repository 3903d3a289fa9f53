package dev.settle.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The getting-started path of {@code examples/README.md} and {@code docs/dev.md}, in a copy of the built clone
 * ({@link CloneCopy#built}, whose classes are up to date), with only the commands they show: the archetypes
 * installed, a handler and a function project generated and built with their own wrappers, {@code settle dev},
 * {@code settle run}, {@code settle produce} and the handler's log line, {@code settle consume} of the function's
 * output, {@code settle deploy} of a change and {@code settle status}.
 *
 * <p>Two things differ from a reader's machine, both through documented switches: the broker and Settle run on free
 * ports ({@code settle dev}'s flags, the generated manifests' {@code PULSAR_SERVICE_URL} and
 * {@code SETTLE_HTTP_PORT}), never 6650/8080/8090, which others may hold here; and Maven runs offline with a
 * repository of its own in front of the real one, as {@link DocumentedCommandsIT} does. Prints how long the path
 * took from the clone to the handler's first line (with the clone's modules built and a warm Maven repository: the
 * install the README shows packages them again, without compiling).
 */
// Not on PulsarFixture: the getting-started path runs what a user runs, settle dev's broker included.
class GettingStartedIT {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final String NAMES = "persistent://public/default/names";
    private static final String GREETINGS = "persistent://public/default/greetings";

    private final List<Process> background = new ArrayList<>();
    /** Each command this test ran or started, in its folder, without the switches that move it to free ports. */
    private final List<String> ran = new ArrayList<>();

    private Path work;
    private Map<String, String> environment;

    @AfterEach
    void stopEverything() throws Exception {
        for (int i = background.size() - 1; i >= 0; i--) {
            Process process = background.get(i);
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    @Test
    void fromAFreshCloneToAHandlerAFunctionADeployAndAStatus() throws Exception {
        long started = System.nanoTime();
        work = Path.of("target", "getting-started").toAbsolutePath();
        CloneCopy.deleteRecursively(work);
        Path clone = CloneCopy.built(work.resolve("settle"));
        environment = new HashMap<>();
        environment.put("PATH", clone + ":" + System.getenv("PATH")); // export PATH="$PWD:$PATH" in the clone
        environment.put(
                "MAVEN_ARGS",
                "-o -B " + CloneCopy.UP_TO_DATE + " -Dmaven.repo.local=" + work.resolve("m2")
                        + " -Dmaven.repo.local.tail="
                        + System.getProperty(
                                "maven.repo.local",
                                Path.of(System.getProperty("user.home"), ".m2", "repository")
                                        .toString()));
        environment.put("MAVEN_OPTS", DocumentedCommandsIT.nestedMavenOpts());

        // examples/README.md's shell blocks as written: the archetypes installed, greeter generated, verified and
        // validated (DocumentedCommandsIT leaves that document to this test, so that it is built once).
        List<DocumentedCommandsIT.Block> readme = DocumentedCommandsIT.blocks(DocumentedCommandsIT.GETTING_STARTED);
        Path script = Files.writeString(work.resolve("examples-readme.sh"), DocumentedCommandsIT.script(readme));
        int install = 0;
        while (!readme.get(install).shell() || readme.get(install).notRun()) {
            install++;
        }
        assertThat(readme.get(install).text()).contains("install");
        String installed = runScript(
                clone,
                Files.writeString(
                        work.resolve("examples-readme-install.sh"),
                        DocumentedCommandsIT.script(readme.subList(0, install + 1))));
        assertThat(installed).contains(">>> examples/README.md:");

        // The broker in a terminal of its own, started once the install is done (the README's first terminal; the
        // install rewrites the runtime's JAR that settle dev runs from), while the projects are generated and built.
        int port = freePort();
        String serviceUrl = "pulsar://localhost:" + port;
        Path devLog = work.resolve("dev.txt");
        start(
                work,
                "settle dev --port " + port + " --http-port " + freePort() + " --bookie-port " + freePort() + " --data "
                        + work.resolve("dev-data"),
                Map.of(),
                devLog);

        String examples = runScript(
                clone,
                Files.writeString(
                        work.resolve("examples-readme-project.sh"),
                        DocumentedCommandsIT.script(readme.subList(install + 1, readme.size()))));
        assertThat(examples).contains(">>> examples/README.md:", "settle.yaml is valid");
        run(work, generate("settle-function-archetype", "greeter-function"));
        Path greeter = work.resolve("greeter");
        Path function = work.resolve("greeter-function");
        assertThat(greeter.resolve("target/greeter-1.0.0.jar")).exists();
        run(function, "./mvnw -q verify");
        // Issue 50: both projects dead-lettered to names-dlq, and settle dlq showed each the other's letters.
        assertThat(Files.readString(greeter.resolve("settle.yaml")))
                .contains("deadLetterTopic: persistent://public/default/names-greeter-dlq");
        assertThat(Files.readString(function.resolve("settle.yaml")))
                .contains("deadLetterTopic: persistent://public/default/names-greeter-function-dlq");

        awaitLine(devLog, "settle dev: Pulsar is ready", Duration.ofMinutes(3));

        // The handler with the admin API on (docs/dev.md shows the section), so that a change can be deployed.
        int adminPort = freePort();
        // At least 32 characters, as the admin API requires (docs/dev.md makes one with openssl rand -hex 32).
        Files.writeString(greeter.resolve("admin-token.txt"), "getting-started-token-of-at-least-32-characters\n");
        Files.writeString(
                greeter.resolve("settle.yaml"), Files.readString(greeter.resolve("settle.yaml")) + adminSection());
        int handlerHttp = freePort();
        Path handlerLog = work.resolve("run-greeter.txt");
        start(
                greeter,
                "settle run settle.yaml",
                Map.of(
                        "PULSAR_SERVICE_URL", serviceUrl,
                        "SETTLE_HTTP_PORT", Integer.toString(handlerHttp),
                        "SETTLE_ADMIN_PORT", Integer.toString(adminPort)),
                handlerLog);
        int functionHttp = freePort();
        start(
                function,
                "settle run settle.yaml",
                Map.of("PULSAR_SERVICE_URL", serviceUrl, "SETTLE_HTTP_PORT", Integer.toString(functionHttp)),
                work.resolve("run-function.txt"));
        awaitReady(handlerHttp, handlerLog);
        awaitReady(functionHttp, work.resolve("run-function.txt"));

        run(work, "settle produce " + NAMES + " --service-url " + serviceUrl + " ada");
        awaitLine(handlerLog, "hello, ada (attempt 1)", Duration.ofSeconds(60));
        double minutes = (System.nanoTime() - started) / 60e9;
        String timing = String.format(
                "getting started: clone to the handler's first line in %.1f minutes (its modules built, warm Maven"
                        + " repository)",
                minutes);
        System.out.println(timing);
        Files.writeString(work.resolve("timing.txt"), timing + "\n");

        String consumed =
                run(work, "settle consume " + GREETINGS + " --service-url " + serviceUrl + " --count 1 --timeout 60");
        assertThat(consumed).contains("payload (10 bytes): hello, ada", "attempt 1");

        // A change, built and deployed into the running Settle: the next name gets the new code.
        Path source = greeter.resolve("src/main/java/com/acme/greeter/GreetingHandler.java");
        Files.writeString(
                source, Files.readString(source).replace("greeting + \", \" + name", "greeting + \", dear \" + name"));
        run(greeter, "./mvnw -q verify");
        String admin = " --admin http://127.0.0.1:" + adminPort + " --token-file admin-token.txt";
        String deployed = run(greeter, "settle deploy target/greeter-1.0.0.jar --subscription greeter" + admin);
        assertThat(deployed).contains("subscription 'greeter': deployed generation 2");
        run(work, "settle produce " + NAMES + " --service-url " + serviceUrl + " bob");
        awaitLine(handlerLog, "hello, dear bob (attempt 1)", Duration.ofSeconds(60));
        String status = run(greeter, "settle status" + admin);
        assertThat(status).contains("subscription 'greeter': generation 2");
        assertThat(Files.readString(handlerLog)).doesNotContain("hello, dear ada");
        assertTheReadmesWalkThroughWasFollowed(Files.readString(script));
    }

    /** The YAML block docs/dev.md tells a reader to add to settle.yaml before deploying, as it is written there. */
    private static String adminSection() throws IOException {
        String dev = Files.readString(ROOT.resolve("docs/dev.md"));
        int start = dev.indexOf("```yaml\n", dev.indexOf("needs the admin API")) + "```yaml\n".length();
        String block = dev.substring(start, dev.indexOf("```", start));
        StringBuilder section = new StringBuilder();
        block.lines()
                .forEach(line -> section.append(line.replaceFirst("^   ", "")).append('\n'));
        assertThat(section.toString()).startsWith("admin:\n");
        return section.toString();
    }

    private static String generate(String archetype, String artifactId) {
        return "settle/mvnw -q org.apache.maven.plugins:maven-archetype-plugin:3.4.1:generate -DinteractiveMode=false"
                + " -DarchetypeGroupId=dev.settle -DarchetypeArtifactId=" + archetype
                + " -DarchetypeVersion=0.1.0-SNAPSHOT"
                + " -DgroupId=com.acme -DartifactId=" + artifactId + " -Dversion=1.0.0 -Dpackage=com.acme.greeter";
    }

    /** Runs a command as the documents show it, in {@code folder}; returns its output, or fails with it. */
    private String run(Path folder, String command) throws Exception {
        assertDocumented(command);
        ran.add(folder.getFileName() + ": " + bare(command));
        return execute(folder, List.of("sh", "-c", command), command);
    }

    private String runScript(Path folder, Path script) throws Exception {
        return execute(folder, List.of("sh", script.toString()), script.toString());
    }

    private String execute(Path folder, List<String> commandLine, String command) throws Exception {
        Path output = Files.createTempFile(work, "command-", ".txt");
        ProcessBuilder builder = new ProcessBuilder(commandLine)
                .directory(folder.toFile())
                .redirectErrorStream(true)
                .redirectOutput(output.toFile());
        builder.environment().putAll(environment);
        Process process = builder.start();
        boolean done = process.waitFor(10, TimeUnit.MINUTES);
        if (!done) {
            // The shell's children too: a Maven build left running without its shell goes on writing target/.
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        String printed = Files.readString(output, StandardCharsets.UTF_8);
        assertThat(done)
                .as("%s still running after 10 minutes:%n%s", command, printed)
                .isTrue();
        assertThat(process.exitValue())
                .as("%s in %s:%n%s", command, folder, printed)
                .isZero();
        return printed;
    }

    private void start(Path folder, String command, Map<String, String> variables, Path output) throws IOException {
        assertDocumented(command);
        ran.add(folder.getFileName() + ": " + bare(command));
        // exec: the signal at the end reaches the launcher's java, which stops cleanly on it.
        ProcessBuilder builder = new ProcessBuilder("sh", "-c", "exec " + command)
                .directory(folder.toFile())
                .redirectErrorStream(true)
                .redirectOutput(output.toFile());
        builder.environment().putAll(environment);
        builder.environment().putAll(variables);
        background.add(builder.start());
    }

    /** The command, without the flags that move it to free ports, is one a document shows. */
    private static void assertDocumented(String command) throws IOException {
        String documented = Files.readString(ROOT.resolve("examples/README.md"))
                + Files.readString(ROOT.resolve("docs/dev.md"))
                + Files.readString(ROOT.resolve("docs/live-code.md"));
        String bare = bare(command)
                .replace("greeter-function", "greeter")
                .replace("settle-function-archetype", "settle-handler-archetype");
        String firstWords = bare.length() > 60 ? bare.substring(0, 60) : bare;
        assertThat(documented.replaceAll("\\\\\\n\\s*", ""))
                .as("a document shows %s", command)
                .contains(firstWords);
    }

    /** {@code command} without the switches that move it to free ports or name the test's token file. */
    private static String bare(String command) {
        return command.replaceAll(" --(service-url|port|http-port|bookie-port|data|admin) \\S+", "")
                .replaceAll(" --timeout \\d+", "")
                .replaceAll(" --token-file \\S+", "");
    }

    /**
     * The README's "From a clone to your own handler" section, followed as written: its first block is the examples
     * document's first block (run above as a script), and each command of its second block, in the folder its
     * {@code cd}s lead to, was run by this test, word for word but for the switches to free ports.
     */
    private void assertTheReadmesWalkThroughWasFollowed(String examplesScript) throws IOException {
        List<String> readme = Files.readAllLines(ROOT.resolve("README.md"));
        int section = readme.indexOf("## From a clone to your own handler") + 1;
        assertThat(section).as("the README's walk-through section's line").isPositive();
        List<DocumentedCommandsIT.Block> blocks = DocumentedCommandsIT.blocks(ROOT.resolve("README.md")).stream()
                .filter(block -> block.shell() && block.line() > section)
                .limit(2)
                .toList();
        assertThat(blocks).hasSize(2);
        String script = examplesScript.replaceAll("\\\\\n\\s*", " ").replaceAll(" {2,}", " ");
        String install = commands(blocks.get(0).text()).get(0);
        assertThat(script)
                .as("the README's install command, run by the examples script")
                .contains(install);

        // Each line is a terminal's: a cd leads within its line (the clone is a folder named settle, and the projects
        // go beside it, into the test's work folder); a line without one may run anywhere.
        String besideTheClone = work.getFileName().toString();
        for (String line : commands(blocks.get(1).text())) {
            String folder = null;
            for (String command : line.split(" && ")) {
                if (command.equals("cd ..")) {
                    folder = besideTheClone;
                } else if (command.startsWith("cd ")) {
                    folder = command.substring(3);
                } else {
                    String in = folder;
                    boolean followed = script.contains(command)
                            || ran.stream()
                                    .anyMatch(done -> in == null
                                            ? done.endsWith(": " + command)
                                            : done.equals(in + ": " + command));
                    assertThat(followed)
                            .as("the README's '%s' (in %s) was run as written; ran: %s", command, in, ran)
                            .isTrue();
                }
            }
        }
    }

    /** A shell block's commands: comments and blank lines left out, continued lines joined. */
    private static List<String> commands(String block) {
        return List.of(block.replaceAll("\\\\\n\\s*", " ")
                .lines()
                .map(line -> line.replaceFirst("\\s+#.*$", "")
                        .replaceAll(" {2,}", " ")
                        .strip())
                .filter(line -> !line.isEmpty() && !line.startsWith("#"))
                .toArray(String[]::new));
    }

    private static void awaitLine(Path output, String line, Duration timeout) {
        Waits.until("'" + line + "'", timeout, () -> Files.readString(output), printed -> printed.contains(line));
    }

    private static void awaitReady(int httpPort, Path output) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest readyz = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/readyz"))
                .build();
        Waits.until(
                "settle run ready on port " + httpPort,
                Duration.ofMinutes(2),
                () -> http.send(readyz, HttpResponse.BodyHandlers.discarding()).statusCode() == 200,
                () -> Files.readString(output));
    }

    private static int freePort() throws IOException {
        return SettleProcess.freePort();
    }
}
