package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HandlerJarsTest {
    @TempDir
    Path folder;

    @Test
    void fiftyThousandDeclaredNamesAreReadInLinearTime() throws Exception {
        // Each name twice: duplicates count once. A list's contains() took 4.6 s for these (issue 32) and about 50 s
        // through the whole read; linear, the read takes well under a second on a quiet machine and up to 4 s on a
        // loaded one, so the bound is generous and still far below the quadratic read.
        String[] lines = IntStream.range(0, 100_000)
                .mapToObj(i -> "test.generated.Handler" + (i % 50_000))
                .toArray(String[]::new);
        Path jar = TestJar.at(folder.resolve("many.jar")).services(lines).build();

        long began = System.nanoTime();
        HandlerJars read = HandlerJars.read(jar, JarLimits.DEFAULT);
        Duration took = Duration.ofNanos(System.nanoTime() - began);

        assertThat(read.declared()).hasSize(50_000).startsWith("test.generated.Handler0", "test.generated.Handler1");
        assertThat(took).isLessThan(Duration.ofSeconds(20));
    }

    @Test
    void aServicesLineIsQuotedWithItsControlCharactersWrittenOut() {
        Path jar = TestJar.at(folder.resolve("forged.jar"))
                .services("test.Fine", "not a class\u001b[31m\u0000")
                .build();

        assertThatThrownBy(() -> HandlerJars.read(jar, JarLimits.DEFAULT))
                .isInstanceOf(HandlerLoadException.class)
                .hasMessageContaining("line 2 of META-INF/services/dev.settle.sdk.Handler is not a class name:"
                        + " 'not a class\\u001b[31m\\u0000'");
    }
}
