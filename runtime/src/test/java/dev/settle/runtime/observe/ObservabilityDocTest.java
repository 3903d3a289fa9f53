package dev.settle.runtime.observe;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every metric the runtime registers has its row in docs/observability.md: a new one cannot go undocumented. */
class ObservabilityDocTest {
    private static final Pattern METRIC = Pattern.compile("\\.name\\(\"(settle_[a-z_]+)\"\\)");

    @Test
    void everyRegisteredMetricIsInTheMetricsTable() throws IOException {
        List<String> registered = new ArrayList<>();
        try (Stream<Path> sources = Files.walk(Path.of("src/main/java"))) {
            for (Path source :
                    sources.filter(p -> p.toString().endsWith(".java")).toList()) {
                Matcher metric = METRIC.matcher(Files.readString(source));
                while (metric.find()) {
                    registered.add(metric.group(1));
                }
            }
        }
        String doc = Files.readString(Path.of("../docs/observability.md"));

        assertThat(registered).hasSizeGreaterThanOrEqualTo(17);
        // A counter's row names it with the _total the exposition adds; "| `settle_x" matches both.
        assertThat(registered).allSatisfy(name -> assertThat(doc).contains("| `" + name));
    }
}
