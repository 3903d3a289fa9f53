package dev.settle.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every shell block in the README, {@code docs/}, {@code examples/README.md} and the chart's README runs as
 * written, so a document cannot rot again; a block that needs what a test machine lacks (a cluster, Docker, a
 * broker running until Ctrl-C) says so in an HTML comment right above it, {@code <!-- not run: why -->}. A block
 * whose comment is {@code <!-- file: PATH -->} is a file the reader writes (PATH relative to the repository root)
 * before the shell blocks after it run.
 *
 * <p>Each document runs in a folder of its own: {@code settle/} is a copy of the built clone ({@link CloneCopy#built}),
 * so the commands see the repository as a reader's clone, while whatever they write, their builds' output included,
 * stays in the folder. Maven runs offline ({@code MAVEN_ARGS}) with a local repository of its own in front of the real
 * one, read-only, so an {@code install} in a document never touches {@code ~/.m2}; {@code mvn} is the wrapper.
 */
// Not on PulsarFixture: the documents' commands run as written, with the brokers they start themselves.
class DocumentedCommandsIT {
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    static final Path GETTING_STARTED = ROOT.resolve("examples/README.md");

    private static final Pattern FENCE = Pattern.compile("^(\\s*)```(\\S*)\\s*$");
    private static final Pattern DIRECTIVE = Pattern.compile("^\\s*<!-- (not run|file): (.*?) -->\\s*$");
    private static final List<String> SHELL = List.of("sh", "bash", "shell");

    record Block(
            Path document,
            int line,
            String language,
            String text,
            Optional<String> directive,
            Optional<String> argument) {
        boolean shell() {
            return SHELL.contains(language);
        }

        boolean notRun() {
            return directive.filter("not run"::equals).isPresent();
        }

        @Override
        public String toString() {
            return ROOT.relativize(document) + ":" + line;
        }
    }

    static List<Path> documents() throws IOException {
        List<Path> documents = new ArrayList<>(
                List.of(ROOT.resolve("README.md"), GETTING_STARTED, ROOT.resolve("helm/settle/README.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(path -> path.toString().endsWith(".md")).sorted().forEach(documents::add);
        }
        return documents;
    }

    static List<Block> blocks(Path document) throws IOException {
        List<String> lines = Files.readAllLines(document, StandardCharsets.UTF_8);
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            int indent = open.group(1).length();
            int start = i;
            StringBuilder text = new StringBuilder();
            for (i++; i < lines.size() && !lines.get(i).strip().equals("```"); i++) {
                String line = lines.get(i);
                text.append(
                                line.length() >= indent
                                                && line.substring(0, indent).isBlank()
                                        ? line.substring(indent)
                                        : line.strip())
                        .append('\n');
            }
            int above = start - 1;
            while (above >= 0 && lines.get(above).isBlank()) {
                above--;
            }
            Matcher directive = DIRECTIVE.matcher(above >= 0 ? lines.get(above) : "");
            boolean found = directive.matches();
            blocks.add(new Block(
                    document,
                    start + 1,
                    open.group(2),
                    text.toString(),
                    found ? Optional.of(directive.group(1)) : Optional.empty(),
                    found ? Optional.of(directive.group(2).strip()) : Optional.empty()));
        }
        return blocks;
    }

    @Test
    void everyShellBlockRunsOrSaysWhyNot() throws IOException {
        List<String> runnable = new ArrayList<>();
        for (Path document : documents()) {
            for (Block block : blocks(document)) {
                if (block.shell()) {
                    assertThat(block.directive().filter("file"::equals))
                            .as("%s: a shell block is run, not written", block)
                            .isEmpty();
                    if (block.notRun()) {
                        assertThat(block.argument().orElseThrow())
                                .as("%s: say why it is not run", block)
                                .hasSizeGreaterThan(10);
                    } else {
                        runnable.add(ROOT.relativize(document) + ": "
                                + block.text().lines().findFirst().orElse(""));
                    }
                } else if (block.directive().filter("not run"::equals).isPresent()) {
                    throw new AssertionError(block + ": only shell blocks are run; 'not run' means nothing here");
                }
            }
        }
        assertThat(runnable)
                .containsExactly(
                        "README.md: ./mvnw -q -pl runtime,examples -am package -DskipTests",
                        "examples/README.md: ./mvnw -q -pl archetype,function-archetype -am install -DskipTests",
                        "examples/README.md: cd ..",
                        "examples/README.md: ./mvnw -q verify",
                        "examples/README.md: settle validate settle.yaml",
                        "docs/dev.md: export PATH=\"$PWD:$PATH\"     # in the clone: ./settle as settle",
                        "docs/helm.md: sed -n '/^manifest:/,/^[a-z]/s/^  //p' orders-values.yaml > orders-manifest.yaml"
                                + "   # the manifest: section");
    }

    @TestFactory
    Stream<DynamicTest> everyUnmarkedShellBlockRunsAsWritten() throws IOException {
        List<DynamicTest> tests = new ArrayList<>();
        for (Path document : documents()) {
            if (document.equals(GETTING_STARTED)) {
                continue; // GettingStartedIT runs it, as the first steps of its path: one build of it is enough
            }
            List<Block> blocks = blocks(document);
            if (blocks.stream().anyMatch(block -> block.shell() && !block.notRun())) {
                tests.add(DynamicTest.dynamicTest(ROOT.relativize(document).toString(), () -> run(document, blocks)));
            }
        }
        return tests.stream();
    }

    /**
     * The JVM options of the Maven builds these tests run: the machine's, not the user's (the parent POM's
     * {@code nested.maven.opts}, C1 only, which the build passes as a system property); the JVM's defaults without it.
     */
    static String nestedMavenOpts() {
        return System.getProperty("nested.maven.opts", "");
    }

    /** The document's runnable shell blocks as one script, with the files it has the reader write. */
    static String script(List<Block> blocks) {
        StringBuilder script = new StringBuilder("set -eu\n");
        for (Block block : blocks) {
            if (block.directive().filter("file"::equals).isPresent()) {
                script.append("mkdir -p \"$(dirname '")
                        .append(block.argument().get())
                        .append("')\"\n")
                        .append("cat > '")
                        .append(block.argument().get())
                        .append("' <<'SETTLE_DOCUMENT_EOF'\n")
                        .append(block.text())
                        .append("SETTLE_DOCUMENT_EOF\n");
            } else if (block.shell() && !block.notRun()) {
                script.append("echo '>>> ").append(block).append("'\n").append(block.text());
            }
        }
        return script.toString();
    }

    private static void run(Path document, List<Block> blocks) throws Exception {
        Path folder = Path.of(
                        "target",
                        "documented-commands",
                        ROOT.relativize(document).toString().replace('/', '_'))
                .toAbsolutePath();
        CloneCopy.deleteRecursively(folder);
        Path clone = CloneCopy.built(folder.resolve("settle"));
        Path bin = Files.createDirectories(folder.resolve("bin"));
        Path mvn = Files.writeString(bin.resolve("mvn"), "#!/bin/sh\nexec '" + clone.resolve("mvnw") + "' \"$@\"\n");
        assertThat(mvn.toFile().setExecutable(true)).isTrue();

        Path scriptFile = Files.writeString(folder.resolve("commands.sh"), script(blocks));

        String localRepository = System.getProperty(
                "maven.repo.local",
                Path.of(System.getProperty("user.home"), ".m2", "repository").toString());
        ProcessBuilder builder = new ProcessBuilder("sh", scriptFile.toString())
                .directory(clone.toFile())
                .redirectErrorStream(true)
                .redirectOutput(folder.resolve("output.txt").toFile());
        builder.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        builder.environment().put("PWD", clone.toString());
        builder.environment().put("MAVEN_OPTS", nestedMavenOpts());
        builder.environment()
                .put(
                        "MAVEN_ARGS",
                        "-o -B " + CloneCopy.UP_TO_DATE + " -Dmaven.repo.local=" + folder.resolve("m2")
                                + " -Dmaven.repo.local.tail=" + localRepository);
        Process process = builder.start();
        boolean done = process.waitFor(4, TimeUnit.MINUTES);
        if (!done) {
            // The shell's children too: a Maven build left running without its shell goes on writing target/.
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        String output = Files.readString(folder.resolve("output.txt"));
        assertThat(done)
                .as("%s still running after 4 minutes:%n%s", document, output)
                .isTrue();
        assertThat(process.exitValue())
                .as("%s, as run by %s:%n%s", document, scriptFile, output)
                .isZero();
    }
}
