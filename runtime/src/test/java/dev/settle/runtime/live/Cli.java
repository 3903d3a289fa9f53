package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A {@code settle} command run in the test's JVM, as the launcher runs it ({@code Main.execute}): a JVM of its own for
 * each command spent seconds of CPU starting, beside the tests' runtimes (issue 43).
 */
final class Cli {
    private Cli() {}

    /** What {@code settle <args>} prints on standard output; it must exit 0. */
    static String out(String... args) {
        return printed(0, args)[0];
    }

    /** What {@code settle <args>} prints (out, err); it must exit {@code exit}. */
    static String[] printed(int exit, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exited = Main.execute(
                List.of(args),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String[] printed = {out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)};
        assertThat(exited).as("settle %s: %s", List.of(args), printed[1]).isEqualTo(exit);
        return printed;
    }
}
