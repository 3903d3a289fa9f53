package dev.settle.benchmarks;

import dev.settle.benchmarks.handlers.Marker;
import dev.settle.benchmarks.handlers.Sink;
import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Settle started in this JVM ({@link Settle#start}), in a child JVM of its own so that neither the broker's heap
 * nor its threads are in what it measures. Its handler hands samples back through the {@link Sink}.
 *
 * <ul>
 *   <li>{@code retry <manifest> <samples>}: the {@code RetryingHandler}'s retry → redelivery times; prints
 *       {@code BENCH retry <p50 ns> <p99 ns> <samples>}.
 *   <li>{@code held <manifest> <count>}: measures the live heap with the consumer subscribed and idle, prints
 *       {@code BENCH ready}, waits until the {@code HoldingHandler} holds {@code count} messages at once, measures
 *       again; prints {@code BENCH held-bytes <bytes per held message> <released before the measurement>} and,
 *       once all came back, {@code BENCH held-lateness <p50 ns> <p99 ns> <samples> <min ns> <max ns>}.
 *   <li>{@code keyhold <manifest> <others> <held>}: prints {@code BENCH ready} once subscribed; once the
 *       {@code KeyHoldHandler} has handed over {@code others} samples of the other keys and {@code held} of the
 *       failing key's later messages, prints {@code BENCH keyhold-others <p50 ns> <p99 ns> <samples> <first to last
 *       sample ns>} and {@code BENCH keyhold-held <p50 ns> <max ns> <samples>}.
 * </ul>
 */
final class SettleInProcess {
    private static final Duration WAIT = Duration.ofMinutes(3);

    private final long[] samples;
    private final AtomicInteger taken = new AtomicInteger();
    /** {@code System.nanoTime()} as the first and the last expected sample came. */
    private volatile long firstAt;

    private volatile long lastAt;

    private static final Pattern HELD = Pattern.compile("(?m)^settle_held_retries\\{[^}]*} (\\S+)$");

    private SettleInProcess(int expected) {
        samples = new long[expected];
    }

    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        Path manifest = Path.of(args[1]);
        int count = Integer.parseInt(args[2]);
        SettleInProcess run = new SettleInProcess(count);
        Sink.install(run::take);
        SettleInProcess held = scenario.equals("keyhold") ? new SettleInProcess(Integer.parseInt(args[3])) : null;
        if (held != null) {
            Sink.install("held", held::take);
        }
        try (Deployment deployment = Preflight.check(manifest, System.getenv());
                Settle settle = Settle.start(deployment, Duration.ofSeconds(5))) {
            switch (scenario) {
                case "retry" -> {
                    run.awaitSamples();
                    Marker.print("retry", run.percentile(50), run.percentile(99), count);
                }
                case "held" -> run.held(settle.httpPort(), count);
                case "keyhold" -> {
                    // Settle.start returns before the consumer is subscribed (seconds later on a busy machine):
                    // messages published before then would wait for it, and their latency would measure the wait.
                    awaitReady(settle.httpPort());
                    Marker.print("ready");
                    run.awaitSamples();
                    held.awaitSamples();
                    Marker.print(
                            "keyhold-others", run.percentile(50), run.percentile(99), count, run.lastAt - run.firstAt);
                    Marker.print("keyhold-held", held.percentile(50), held.percentile(100), held.samples.length);
                }
                default -> throw new IllegalArgumentException("unknown scenario " + scenario);
            }
        }
        System.exit(0);
    }

    private void held(int httpPort, int count) throws Exception {
        long before = Heap.usedAfterGc();
        Marker.print("ready");
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (heldRetries(httpPort) < count && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        long after = Heap.usedAfterGc();
        // Messages released before this point were no longer held when the heap was measured: the figure is
        // valid only when this is 0 (the harness checks it).
        Marker.print("held-bytes", (after - before) / count, taken.get());
        awaitSamples();
        Marker.print("held-lateness", percentile(50), percentile(99), count, percentile(0.001), percentile(100));
    }

    /** Waits until {@code /readyz} answers 200: every handler open, every consumer subscribed and connected. */
    private static void awaitReady(int httpPort) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest readyz = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/readyz"))
                .build();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (http.send(readyz, HttpResponse.BodyHandlers.discarding()).statusCode() != 200) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("/readyz not 200 after " + WAIT + ": the consumer never subscribed");
            }
            TimeUnit.MILLISECONDS.sleep(5);
        }
    }

    /** The {@code settle_held_retries} gauge, as Prometheus reads it. */
    private static double heldRetries(int httpPort) throws Exception {
        HttpResponse<String> metrics = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        Matcher held = HELD.matcher(metrics.body());
        return held.find() ? Double.parseDouble(held.group(1)) : 0;
    }

    private void take(long sample) {
        int index = taken.getAndIncrement();
        if (index < samples.length) {
            samples[index] = sample;
        }
        if (index == 0) {
            firstAt = System.nanoTime();
        }
        if (index == samples.length - 1) {
            lastAt = System.nanoTime();
        }
    }

    private void awaitSamples() throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (taken.get() < samples.length) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(taken.get() + " of " + samples.length + " samples after " + WAIT);
            }
            TimeUnit.MILLISECONDS.sleep(5);
        }
    }

    private long percentile(double p) {
        return Stats.percentile(samples.clone(), p);
    }
}
