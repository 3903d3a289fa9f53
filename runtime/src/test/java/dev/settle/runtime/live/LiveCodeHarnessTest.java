package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The live-code IT classes run concurrently in one JVM: each one's handlers report to its own {@link
 * LiveCodeHarness#handled}, whatever another class sets up or tears down meanwhile (LiveCodeIT's swap under load saw
 * 0 of its 5 000 messages beside HoldForFixIT, its driver having acknowledged all 5 000).
 */
class LiveCodeHarnessTest {
    @TempDir
    Path folder;

    @Test
    void aHandlerReportsToItsOwnTestWhileAnotherStartsAndEnds() throws Exception {
        LiveCodeHarness swapping = harness("swapping");
        Path jar = swapping.recorder("a.jar", "A");
        // Another class's test starts beside it, then a generation of the first is swapped in.
        LiveCodeHarness beside = harness("beside");
        recorderSink(jar).accept("slow-1", "A|1");
        assertThat(swapping.handled).extracting(LiveCodeHarness.Handled::value).containsExactly("slow-1");
        assertThat(beside.handled).isEmpty();
        // The other test ends, then the next generation is swapped in: it still has its test's sink.
        beside.tearDown();
        BiConsumer<String, String> later = recorderSink(jar);
        assertThat(later)
                .as("the sink of a generation loaded after another test's tearDown")
                .isNotNull();
        later.accept("slow-2", "A|1");
        assertThat(swapping.handled).extracting(LiveCodeHarness.Handled::value).containsExactly("slow-1", "slow-2");
        swapping.tearDown();
    }

    private LiveCodeHarness harness(String name) throws Exception {
        LiveCodeHarness harness = new LiveCodeHarness() {};
        harness.folder = Files.createDirectories(folder.resolve(name));
        harness.setUp();
        return harness;
    }

    /** A new instance of the recorder in {@code jar}, as a swap loads it, and the sink it reports to. */
    @SuppressWarnings("unchecked")
    private BiConsumer<String, String> recorderSink(Path jar) throws Exception {
        try (URLClassLoader loader =
                new URLClassLoader(new URL[] {jar.toUri().toURL()}, getClass().getClassLoader())) {
            Object recorder = loader.loadClass("test.Recorder").getConstructor().newInstance();
            Field sink = recorder.getClass().getDeclaredField("sink");
            sink.setAccessible(true);
            return (BiConsumer<String, String>) sink.get(recorder);
        }
    }
}
