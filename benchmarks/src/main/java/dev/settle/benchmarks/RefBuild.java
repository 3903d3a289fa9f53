package dev.settle.benchmarks;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Settle's runtime JAR built at a git ref, for {@code --compare}: the ref is checked out in a temporary
 * {@code git worktree} under {@code benchmarks/target/compare/}, its runtime packaged there offline
 * ({@code ./mvnw -o -q -B package -DskipTests -pl runtime -am}, never {@code install}: the shared local repository
 * keeps this tree's SNAPSHOTs), the shaded JAR copied out by commit and the worktree removed. A second comparison with
 * the same commit reuses the JAR.
 *
 * @param label the ref as given, and its commit
 */
record RefBuild(String label, Path runtimeJar) {
    private static final long GIT_MINUTES = 2;
    private static final long BUILD_MINUTES = 20;

    static RefBuild of(Path root, String ref, PrintStream out) throws IOException, InterruptedException {
        String commit = run(root, GIT_MINUTES, "git", "rev-parse", "--verify", "--quiet", ref + "^{commit}")
                .trim();
        String shortCommit = commit.substring(0, 12);
        String label = ref + " (" + shortCommit + ")";
        Path compare = Files.createDirectories(root.resolve("benchmarks/target/compare"));
        Path jar = compare.resolve("settle-runtime-" + commit + ".jar");
        if (Files.isRegularFile(jar)) {
            out.println("== Settle at " + label + ": built before, " + jar);
            return new RefBuild(label, jar);
        }
        Path tree = compare.resolve("tree-" + shortCommit);
        // A tree left by a run that was killed: its folder (gone with `mvn clean` or not) and its registration.
        if (Files.exists(tree)) {
            run(root, GIT_MINUTES, "git", "worktree", "remove", "--force", tree.toString());
        }
        run(root, GIT_MINUTES, "git", "worktree", "prune");
        out.println("== building Settle at " + label + " in " + tree + " (a minute or more) ...");
        long started = System.nanoTime();
        run(root, GIT_MINUTES, "git", "worktree", "add", "--detach", tree.toString(), commit);
        try {
            run(tree, BUILD_MINUTES, "./mvnw", "-o", "-q", "-B", "package", "-DskipTests", "-pl", "runtime", "-am");
            Path built = tree.resolve("runtime/target/settle-runtime.jar");
            if (!Files.isRegularFile(built)) {
                throw new IllegalStateException("the build at " + label + " made no " + built
                        + ": a ref from before the runtime's shaded JAR cannot be compared");
            }
            Files.copy(built, jar, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            run(root, GIT_MINUTES, "git", "worktree", "remove", "--force", tree.toString());
        }
        out.printf("== Settle at %s built in %.0f s: %s%n", label, (System.nanoTime() - started) / 1e9, jar);
        return new RefBuild(label, jar);
    }

    /** Runs {@code command} in {@code folder}; its output, or an exception that quotes it when it fails. */
    private static String run(Path folder, long minutes, String... command) throws IOException, InterruptedException {
        Path output = Files.createTempFile("settle-compare-", ".log");
        try {
            Process process = new ProcessBuilder(command)
                    .directory(folder.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile())
                    .start();
            if (!process.waitFor(minutes, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new IllegalStateException(
                        String.join(" ", command) + " in " + folder + ": not done in " + minutes + " min");
            }
            String text = Files.readString(output, StandardCharsets.UTF_8);
            if (process.exitValue() != 0) {
                List<String> lines = text.lines().toList();
                throw new IllegalStateException(String.join(" ", command) + " in " + folder + " exited with "
                        + process.exitValue()
                        + (command[0].equals("git") && command[1].equals("rev-parse")
                                ? ": no commit is named '" + command[command.length - 1].replace("^{commit}", "")
                                        + "' here; give a branch, a tag or a commit"
                                : "")
                        + "; its last lines:\n  "
                        + String.join("\n  ", lines.subList(Math.max(0, lines.size() - 30), lines.size())));
            }
            return text;
        } finally {
            Files.deleteIfExists(output);
        }
    }
}
