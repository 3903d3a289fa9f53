package dev.settle.runtime.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** {@code settle} as the command line runs it, in this JVM, with what it wrote to standard output and error. */
final class SettleCommand {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    /** Runs {@code settle args...} with no environment variables; returns its exit code. Drops an earlier run's output. */
    int run(String... args) {
        out.reset();
        err.reset();
        return Main.execute(
                List.of(args),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                Map.of());
    }

    /** What the last run wrote to standard output. */
    String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    /** What the last run wrote to standard error. */
    String err() {
        return err.toString(StandardCharsets.UTF_8);
    }
}
