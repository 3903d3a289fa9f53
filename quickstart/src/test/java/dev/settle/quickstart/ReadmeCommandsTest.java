package dev.settle.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The README's commands are the ones that exist and that CI runs: no drift. */
class ReadmeCommandsTest {
    private static final Path ROOT = Path.of("..");

    private static List<String> readmeCommands() throws IOException {
        String readme = Files.readString(ROOT.resolve("README.md"));
        String block = readme.substring(readme.indexOf("## Three commands"));
        block = block.substring(block.indexOf("```sh") + 5, block.indexOf("```", block.indexOf("```sh") + 5));
        return block.lines()
                .map(line -> line.replaceFirst("\\s+#.*", "").strip())
                .filter(l -> !l.isEmpty())
                .toList();
    }

    @Test
    void theReadmeGivesExactlyTheQuickstartTheTestCommandAndTheWholeSuite() throws IOException {
        assertThat(readmeCommands())
                .containsExactly("./quickstart.sh", "./mvnw -B verify", "./mvnw -B verify -Preliability");
    }

    @Test
    void ciRunsTheReadmesWholeSuite() throws IOException {
        List<String> ciLines = Files.readAllLines(ROOT.resolve(".ci/run")).stream()
                .map(String::strip)
                .toList();
        assertThat(ciLines).contains(readmeCommands().get(2));
    }

    @Test
    void theReadmeStaysShortEnoughToReadFirst() throws IOException {
        // Later features document under docs/ and link from the README: it is where a new user starts.
        assertThat(Files.readAllLines(ROOT.resolve("README.md"))).hasSizeLessThanOrEqualTo(150);
    }

    @Test
    void everyLocalLinkOfTheReadmeAndTheDocsNamesAFileThatExists() throws IOException {
        List<String> broken = new java.util.ArrayList<>();
        List<Path> documents =
                new java.util.ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("examples/README.md")));
        try (var docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(path -> path.toString().endsWith(".md")).sorted().forEach(documents::add);
        }
        java.util.regex.Pattern link = java.util.regex.Pattern.compile("\\]\\(([^)\\s]+)\\)");
        for (Path document : documents) {
            java.util.regex.Matcher matcher = link.matcher(Files.readString(document));
            while (matcher.find()) {
                String target = matcher.group(1).replaceFirst("#.*", "");
                if (target.isEmpty() || target.contains("://") || target.startsWith("mailto:")) {
                    continue;
                }
                if (!Files.exists(document.getParent().resolve(target))) {
                    broken.add(ROOT.relativize(document) + " -> " + matcher.group(1));
                }
            }
        }
        assertThat(broken).isEmpty();
    }

    @Test
    void theQuickstartScriptRunsTheQuickstartMainClass() throws IOException {
        Path script = ROOT.resolve("quickstart.sh");
        assertThat(Files.isExecutable(script)).isTrue();
        assertThat(Files.readString(script)).contains(Quickstart.class.getName());
    }
}
