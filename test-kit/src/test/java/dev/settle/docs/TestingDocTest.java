package dev.settle.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** docs/testing.md's function test is {@link EnrichFunctionTest}'s code, which compiles and runs. */
class TestingDocTest {
    private static final String MARK = "// docs/testing.md shows what follows, as it is (TestingDocTest checks it).\n";

    @Test
    void theDocumentedFunctionTestIsTheOneThatRuns() throws Exception {
        String source = Files.readString(Path.of("src/test/java/dev/settle/docs/EnrichFunctionTest.java"));
        String shown = source.substring(source.indexOf(MARK) + MARK.length()).strip();
        String docs = Files.readString(Path.of("..", "docs", "testing.md"));

        assertThat(source).contains(MARK);
        assertThat(docs).contains("```java\n" + shown + "\n```");
    }
}
