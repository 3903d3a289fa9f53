package dev.settle.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * A JFR recording of this JVM, where the embedded broker runs, over one contender's drain ({@code --profile}): CPU
 * samples of every thread, kept in a file of the run's work folder, and the hottest frames of those taken between the
 * contender's first measured message and its last (its markers' wall clock). The harness idles while a consumer drains,
 * so what is sampled is the broker's work; the harness's own threads (main, the children's readers) are left out.
 */
final class BrokerProfile implements AutoCloseable {
    /** JFR's execution sampler's period: 100 samples a second of a busy thread. */
    private static final Duration PERIOD = Duration.ofMillis(10);

    private final Recording recording;
    private final Path file;

    private BrokerProfile(Recording recording, Path file) {
        this.recording = recording;
        this.file = file;
    }

    /** Starts recording; {@link #hottest} stops it and writes {@code file}. */
    static BrokerProfile start(Path file) {
        Recording recording = new Recording();
        recording.setName("broker " + file.getFileName());
        recording.enable("jdk.ExecutionSample").withPeriod(PERIOD);
        recording.start();
        return new BrokerProfile(recording, file);
    }

    /** A frame and the share of the samples it was the top of. */
    record Hot(String frame, long samples, double share) {
        @Override
        public String toString() {
            return String.format(Locale.ROOT, "%5.1f%%  %,6d  %s", share * 100, samples, frame);
        }
    }

    /**
     * Stops the recording, writes it to its file and gives the {@code count} frames most often at the top of a broker
     * thread's stack between {@code fromMillis} and {@code toMillis} (epoch milliseconds), hottest first.
     */
    List<Hot> hottest(long fromMillis, long toMillis, int count) throws IOException {
        recording.stop();
        recording.dump(file);
        Instant from = Instant.ofEpochMilli(fromMillis);
        Instant to = Instant.ofEpochMilli(toMillis);
        Map<String, Long> tops = new HashMap<>();
        long samples = 0;
        for (RecordedEvent event : RecordingFile.readAllEvents(file)) {
            if (!event.getEventType().getName().equals("jdk.ExecutionSample")
                    || event.getStartTime().isBefore(from)
                    || event.getStartTime().isAfter(to)
                    || event.getStackTrace() == null
                    || event.getStackTrace().getFrames().isEmpty()
                    || harness(event.getThread("sampledThread"))) {
                continue;
            }
            samples++;
            tops.merge(frame(event.getStackTrace().getFrames().get(0)), 1L, Long::sum);
        }
        long all = samples;
        return tops.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()))
                .limit(count)
                .map(top -> new Hot(top.getKey(), top.getValue(), (double) top.getValue() / all))
                .toList();
    }

    /** The file the recording went to. */
    Path file() {
        return file;
    }

    /** The harness's own threads: main, and the readers of the children's output ({@link Child}). */
    static boolean harness(RecordedThread thread) {
        if (thread == null || thread.getJavaName() == null) {
            return false;
        }
        String name = thread.getJavaName();
        return name.equals("main") || name.startsWith("bench-");
    }

    static String frame(RecordedFrame frame) {
        return frame.getMethod().getType().getName() + "." + frame.getMethod().getName()
                + (frame.isJavaFrame() ? "" : " (native)");
    }

    @Override
    public void close() {
        recording.close();
    }
}
