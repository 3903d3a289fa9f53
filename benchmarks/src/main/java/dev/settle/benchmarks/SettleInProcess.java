package dev.settle.benchmarks;

import dev.settle.benchmarks.handlers.Dependency;
import dev.settle.benchmarks.handlers.Marker;
import dev.settle.benchmarks.handlers.Sink;
import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
 *   <li>{@code breaker <manifest> <total>}: prints {@code BENCH ready} once subscribed, then obeys its stdin: {@code
 *       down} and {@code up} turn the {@code OutageHandler}'s {@link Dependency} off and on, {@code report} prints
 *       {@code BENCH breaker <handled> <handled after up> <up to first ns> <first to last after up ns> <most held>
 *       <poison calls>} and {@code BENCH breaker-unhandled <index...>} (of {@code 0..total-1}, those never handled)
 *       and ends. The most held is the {@code settle_breaker_held_messages} gauge's highest, read every 100 ms.
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
    private static final Pattern BREAKER_HELD = Pattern.compile("(?m)^settle_breaker_held_messages\\{[^}]*} (\\S+)$");

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
        Outage outage = scenario.equals("breaker") ? new Outage(count) : null;
        if (outage != null) {
            Sink.install(outage::handled);
            Sink.install("poison", calls -> outage.poisonCalls.incrementAndGet());
            Dependency.install(outage.up);
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
                case "breaker" -> {
                    awaitReady(settle.httpPort());
                    Marker.print("ready");
                    outage.obey(settle.httpPort());
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

    /** The breaker scenario's dependency and what its handler handed over. */
    private static final class Outage {
        final AtomicBoolean up = new AtomicBoolean(true);
        final AtomicInteger poisonCalls = new AtomicInteger();
        private final int total;
        /** Guarded by this. */
        private final BitSet handled = new BitSet();

        private int handledAfterUp;
        private long upAt;
        private long firstAfterUp;
        private long lastAfterUp;
        private volatile double mostHeld;

        Outage(int total) {
            this.total = total;
        }

        synchronized void handled(long index) {
            handled.set((int) index);
            if (upAt != 0) {
                long now = System.nanoTime();
                if (handledAfterUp++ == 0) {
                    firstAfterUp = now;
                }
                lastAfterUp = now;
            }
        }

        /** Turns the dependency off and on as the harness says on stdin, until it asks for the report. */
        void obey(int httpPort) throws Exception {
            Thread watch = new Thread(() -> watchHeld(httpPort), "breaker-held");
            watch.setDaemon(true);
            watch.start();
            BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = commands.readLine()) != null; ) {
                switch (line) {
                    case "down" -> up.set(false);
                    case "up" -> {
                        synchronized (this) {
                            upAt = System.nanoTime();
                        }
                        up.set(true);
                    }
                    case "report" -> {
                        report();
                        return;
                    }
                    default -> throw new IllegalArgumentException("unknown command '" + line + "' on stdin");
                }
            }
            throw new IllegalStateException("stdin ended before 'report'");
        }

        private synchronized void report() {
            Marker.print(
                    "breaker",
                    handled.cardinality(),
                    handledAfterUp,
                    handledAfterUp == 0 ? -1 : firstAfterUp - upAt,
                    handledAfterUp == 0 ? 0 : lastAfterUp - firstAfterUp,
                    Math.round(mostHeld),
                    poisonCalls.get());
            BitSet unhandled = new BitSet();
            unhandled.set(0, total);
            unhandled.andNot(handled);
            Marker.print("breaker-unhandled", unhandled.stream().asLongStream().toArray());
        }

        private void watchHeld(int httpPort) {
            HttpClient http = HttpClient.newHttpClient();
            HttpRequest metrics = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/metrics"))
                    .build();
            while (true) {
                try {
                    Matcher held = BREAKER_HELD.matcher(http.send(metrics, HttpResponse.BodyHandlers.ofString())
                            .body());
                    if (held.find()) {
                        mostHeld = Math.max(mostHeld, Double.parseDouble(held.group(1)));
                    }
                    // A gauge read every 100 ms: the most held lasts the whole outage, so this finds it.
                    TimeUnit.MILLISECONDS.sleep(100);
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) {
                    // Settle stopping: the report is printed by then.
                    return;
                }
            }
        }
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
