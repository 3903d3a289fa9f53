package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code settle dlq <command> --help} and docs/dead-letters.md name the same options. */
class DlqHelpTest {
    private static final Pattern OPTION = Pattern.compile("(--[a-z][a-z-]+)");

    private static Set<String> options(String text) {
        Set<String> found = new TreeSet<>();
        Matcher matcher = OPTION.matcher(text);
        while (matcher.find()) {
            found.add(matcher.group(1));
        }
        return found;
    }

    /** The options docs/dead-letters.md gives {@code command} in its table's row. */
    private static Set<String> documented(String command) throws Exception {
        return documented("dlq", command);
    }

    /** The options docs/dead-letters.md gives {@code settle <group> <command>} in its table's row. */
    private static Set<String> documented(String group, String command) throws Exception {
        String doc = Files.readString(Path.of("..", "docs", "dead-letters.md"));
        String row = doc.lines()
                .filter(line -> line.startsWith("| `settle " + group + " " + command + " "))
                .findFirst()
                .orElseThrow(() ->
                        new AssertionError("docs/dead-letters.md has no row for settle " + group + " " + command));
        String[] cells = row.split("\\|");
        return options(cells[cells.length - 1]);
    }

    @ParameterizedTest
    @ValueSource(strings = {"list", "show", "replay"})
    void theHelpAndTheDocumentNameTheSameOptions(String command) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int exit = Main.execute(
                List.of("dlq", command, "--help"),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                Map.of());

        assertThat(exit).isZero();
        assertThat(options(out.toString(StandardCharsets.UTF_8))).isEqualTo(documented(command));
    }

    @ParameterizedTest
    @ValueSource(strings = {"list", "show", "drain"})
    void theHeldCommandsHelpAndTheDocumentNameTheSameOptions(String command) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int exit = Main.execute(
                List.of("held", command, "--help"),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                Map.of());

        assertThat(exit).isZero();
        assertThat(options(out.toString(StandardCharsets.UTF_8))).isEqualTo(documented("held", command));
    }
}
