package dev.settle.benchmarks;

import dev.settle.benchmarks.Report.Figure;
import dev.settle.benchmarks.Report.Goal;
import dev.settle.benchmarks.handlers.IdentityFunction;
import dev.settle.testbroker.EmbeddedPulsar;
import dev.settle.testbroker.LocalRunnerProcess;
import dev.settle.testbroker.PulsarEndpoints;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.apache.pulsar.client.api.PulsarClient;

/**
 * Settle against a hand-written Pulsar client loop, on one broker, in one run; prints a Markdown table
 * (docs/benchmarks.md says what each row measures and how). The broker runs in this JVM; every consumer runs in a
 * child JVM of its own, so that its CPU time is its own.
 *
 * <p>{@code ./benchmarks/run.sh} runs the full benchmark; {@code --smoke} runs tiny counts (what the integration
 * test runs: the figures then mean nothing, only that each measurement still produces one).
 */
public final class Benchmarks {
    /**
     * Both consumers of a comparison get exactly these JVM options, plus whatever {@code SETTLE_BENCH_CHILD_OPTS}
     * holds (space-separated), for profiling both sides alike, e.g.
     * {@code SETTLE_BENCH_CHILD_OPTS=-XX:StartFlightRecording=filename=/tmp/jfr/}.
     */
    private static final List<String> CONSUMER_JVM = consumerJvm();

    private static final List<String> SCHEDULER_JVM = List.of("-Xmx1g", "-XX:+UseG1GC");
    private static final Duration TIMEOUT = Duration.ofMinutes(3);
    private static final long IO_SLEEP_MILLIS = 5;

    private static List<String> consumerJvm() {
        List<String> options = new java.util.ArrayList<>(List.of("-Xmx512m", "-XX:+UseG1GC"));
        String extra = System.getenv("SETTLE_BENCH_CHILD_OPTS");
        if (extra != null && !extra.isBlank()) {
            options.addAll(List.of(extra.trim().split("\\s+")));
        }
        return List.copyOf(options);
    }

    private enum Kind {
        LOOP,
        SETTLE,
        /** Pulsar Functions' LocalRunner 4.0.7 (thread mode, ATLEAST_ONCE), for the function rows only. */
        LOCAL_RUNNER
    }

    /**
     * One consumer run, from its own markers: first message handled to last; the broker's CPU time over the same
     * stretch, read here as the markers arrived ({@link BrokerCpu}).
     */
    private record Run(
            int count,
            long elapsedNanos,
            long cpuNanos,
            long startUpCpuNanos,
            long launchToFirstMillis,
            long brokerCpuNanos) {
        double perSecond() {
            return count * 1e9 / Math.max(1, elapsedNanos);
        }

        double cpuMicrosPerMessage() {
            return cpuNanos / 1e3 / count;
        }

        double brokerCpuMicrosPerMessage() {
            return brokerCpuNanos / 1e3 / count;
        }
    }

    private final PulsarEndpoints pulsar;
    private final PulsarClient client;
    private final Sizes sizes;
    private final Workspace workspace;
    private final PrintStream out;
    private final BrokerCpu brokerCpu = new BrokerCpu();
    private int runs;

    private Benchmarks(PulsarEndpoints pulsar, PulsarClient client, Sizes sizes, Workspace workspace, PrintStream out) {
        this.pulsar = pulsar;
        this.client = client;
        this.sizes = sizes;
        this.workspace = workspace;
        this.out = out;
    }

    @SuppressWarnings("try") // the broker's close() may throw InterruptedException: main has nothing better to do
    public static void main(String[] args) throws Exception {
        Sizes sizes = Sizes.FULL;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--smoke")) {
                sizes = Sizes.SMOKE;
            } else if (args[i].equals("--only") && i + 1 < args.length) {
                sizes = sizes.only(args[++i]);
            } else {
                System.err.println("usage: benchmarks/run.sh [--smoke] [--only"
                        + " noop|tracing|io|function|exactly|retry|held|scheduler|start|memory]");
                System.exit(64);
            }
        }
        Workspace workspace = Workspace.locate();
        System.out.println("== starting the embedded Pulsar broker (about 10 s) ...");
        try (EmbeddedPulsar broker = EmbeddedPulsar.start()) {
            System.out.printf("== broker up in %.1f s%n", broker.startMillis() / 1000.0);
            run(broker.endpoints(), sizes, workspace, System.out);
        }
        System.exit(0);
    }

    /** Runs every measurement against {@code pulsar}, prints the table and writes it to the work folder. */
    static Report run(PulsarEndpoints pulsar, Sizes sizes, Workspace workspace, PrintStream out) throws Exception {
        long started = System.nanoTime();
        Report report = new Report();
        try (PulsarClient client =
                PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).build()) {
            new Benchmarks(pulsar, client, sizes, workspace, out).measure(report);
        }
        report.note(String.format(
                Locale.ROOT,
                "%s mode; %d cores, Java %s (%s), %s; %.0f s in all; child logs in %s",
                sizes.name(),
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"),
                System.getProperty("java.vm.name"),
                ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME),
                (System.nanoTime() - started) / 1e9,
                workspace.work()));
        String table = report.markdown();
        out.println();
        out.println(table);
        Files.writeString(workspace.work().resolve("table.md"), table);
        return report;
    }

    private void measure(Report report) throws Exception {
        double noOpCap = Double.MAX_VALUE;
        if (sizes.runs("noop")) {
            warmUp();
            List<Run[]> batched = noOp(true);
            List<Run[]> unbatched = noOp(false);
            compare(report, "no-op ack, batched producer", batched);
            compare(report, "no-op ack, unbatched producer", unbatched);
            List<Run[]> all = new ArrayList<>(batched);
            all.addAll(unbatched);
            report.add(
                    "consumer CPU from launch to its first message (start-up, not in the rows above)",
                    Figure.of(median(all, Kind.SETTLE, run -> run.startUpCpuNanos() / 1e6), "%,.0f ms"),
                    Figure.of(median(all, Kind.LOOP, run -> run.startUpCpuNanos() / 1e6), "loop %,.0f ms"),
                    Goal.NONE);
            noOpCap = median(batched, Kind.SETTLE, Run::perSecond);
        }
        if (sizes.runs("tracing")) {
            tracingOnAndOff(report);
        }
        if (sizes.runs("io")) {
            ioBound(report, noOpCap);
        }
        if (sizes.runs("function")) {
            functionWithOutput(report);
        }
        if (sizes.runs("exactly")) {
            exactlyOnce(report);
        }
        if (sizes.runsMemory()) {
            pendingOutputsMemory(report);
        }
        if (sizes.runs("retry")) {
            retryLatency(report);
        }
        if (sizes.runs("held")) {
            heldThroughBroker(report);
        }
        if (sizes.runs("scheduler")) {
            heldInScheduler(report);
        }
        if (sizes.runs("start")) {
            runToFirstMessage(report);
        }
    }

    /** @param noOpCap Settle's no-op throughput (batched), above which no concurrency can go */
    private void ioBound(Report report, double noOpCap) throws Exception {
        for (int i = 0; i < Sizes.CONCURRENCY.length; i++) {
            int concurrency = Sizes.CONCURRENCY[i];
            Run run = consume(
                    Kind.SETTLE, "io-c" + concurrency, sizes.ioMessages()[i], true, concurrency, IO_SLEEP_MILLIS);
            double ideal = Math.min(concurrency * 1000.0 / IO_SLEEP_MILLIS, noOpCap);
            report.add(
                    "I/O-bound handler (sleeps 5 ms), concurrency " + concurrency + ": throughput",
                    Figure.of(run.perSecond(), "%,.0f msg/s"),
                    Figure.of(ideal, "ideal %,.0f msg/s"),
                    concurrency == 64 ? Goal.ratio("≥ 0.8× ideal", r -> r >= 0.8) : Goal.NONE);
        }
    }

    /**
     * An identity function with an output, Settle at its defaults (outputs pipelined, batched) against the pipelined
     * loop written by hand: drain rate and consumer CPU per message over an unbatched backlog of 100-byte inputs
     * (a tenth of the no-op backlog), rounds alternating; then the input-to-output latency at 10 msg/s.
     */
    private void functionWithOutput(Report report) throws Exception {
        // At least 500, so that even the smoke run's broker CPU spans several ticks of the process CPU clock (10 ms).
        int count = Math.max(500, sizes.noOpMessages() / 10);
        List<Run[]> rounds = new ArrayList<>();
        Kind[] contenders = {Kind.LOOP, Kind.SETTLE, Kind.LOCAL_RUNNER};
        for (int round = 0; round < sizes.rounds(); round++) {
            Run[] runs = new Run[Kind.values().length];
            // Each contender goes first in one round of three.
            for (int i = 0; i < contenders.length; i++) {
                Kind kind = contenders[(round + i) % contenders.length];
                runs[kind.ordinal()] = drainThroughFunction(kind, count);
            }
            rounds.add(runs);
        }
        if (!BrokerCpu.inThisJvm()) {
            report.note("The broker does not run in the harness's JVM: the broker CPU rows are the harness's own CPU.");
        }
        String what = "identity function with output, unbatched inputs";
        report.add(
                what + ": throughput",
                Figure.of(median(rounds, Kind.SETTLE, Run::perSecond), "%,.0f msg/s"),
                Figure.of(median(rounds, Kind.LOOP, Run::perSecond), "pipelined loop %,.0f msg/s"),
                Goal.ratio("≥ 0.9× loop", r -> r >= 0.9));
        report.add(
                what + ": throughput against LocalRunner",
                Figure.of(median(rounds, Kind.SETTLE, Run::perSecond), "%,.0f msg/s"),
                Figure.of(median(rounds, Kind.LOCAL_RUNNER, Run::perSecond), "LocalRunner %,.0f msg/s"),
                Goal.ratio("≥ 1.25× LocalRunner", r -> r >= 1.25));
        report.add(
                what + ": consumer CPU per message",
                Figure.of(median(rounds, Kind.SETTLE, Run::cpuMicrosPerMessage), "%.1f µs"),
                Figure.of(median(rounds, Kind.LOOP, Run::cpuMicrosPerMessage), "pipelined loop %.1f µs"),
                Goal.ratio("≤ 1.1× loop", r -> r <= 1.1));
        report.add(
                what + ": consumer CPU per message against LocalRunner",
                Figure.of(median(rounds, Kind.SETTLE, Run::cpuMicrosPerMessage), "%.1f µs"),
                Figure.of(median(rounds, Kind.LOCAL_RUNNER, Run::cpuMicrosPerMessage), "LocalRunner %.1f µs"),
                Goal.NONE);
        report.add(
                what + ": broker CPU per message",
                Figure.of(median(rounds, Kind.SETTLE, Run::brokerCpuMicrosPerMessage), "%.1f µs"),
                Figure.of(median(rounds, Kind.LOCAL_RUNNER, Run::brokerCpuMicrosPerMessage), "LocalRunner %.1f µs"),
                Goal.ratio("≤ 1.0× LocalRunner", r -> r <= 1.0));
        report.add(
                what + ": broker CPU per message against the pipelined loop",
                Figure.of(median(rounds, Kind.SETTLE, Run::brokerCpuMicrosPerMessage), "%.1f µs"),
                Figure.of(median(rounds, Kind.LOOP, Run::brokerCpuMicrosPerMessage), "pipelined loop %.1f µs"),
                Goal.NONE);
        latencyAtTenPerSecond(report, Math.max(20, sizes.noOpMessages() / 500));
    }

    private Run drainThroughFunction(Kind kind, int count) throws Exception {
        String name = name("function", kind);
        String topic = topic(name);
        String output = topic + "-out";
        Backlog.produce(client, topic, count, false);
        List<String> command = switch (kind) {
            case SETTLE -> workspace.settleRun(CONSUMER_JVM, functionManifest(name, topic, output, count));
            case LOOP ->
                workspace.javaMain(
                        CONSUMER_JVM,
                        PipelinedLoop.class,
                        pulsar.serviceUrl(),
                        topic,
                        name,
                        output,
                        String.valueOf(count));
            case LOCAL_RUNNER ->
                LocalRunnerProcess.command(
                        pulsar,
                        new LocalRunnerProcess.Function(
                                workspace.handlerJar(),
                                IdentityFunction.class.getName(),
                                List.of(topic),
                                output,
                                name,
                                Map.of("count", String.valueOf(count))),
                        CONSUMER_JVM,
                        Files.createDirectories(workspace.work().resolve(name)));
        };
        long launched = System.currentTimeMillis();
        try (Child child = Child.start(name, command, workspace.work(), brokerCpu::nanos)) {
            Run run = run(child, count, launched);
            out.printf(
                    Locale.ROOT,
                    "   %-28s %,9.0f msg/s  %6.1f µs CPU/msg  broker %6.1f µs CPU/msg%n",
                    name,
                    run.perSecond(),
                    run.cpuMicrosPerMessage(),
                    run.brokerCpuMicrosPerMessage());
            return run;
        }
    }

    /** The run from the child's {@code first} and {@code last} markers. */
    private static Run run(Child child, int count, long launched) throws InterruptedException {
        return run(child, count, launched, "first");
    }

    /** Measured from the marker {@code from} ("first", or "warm" after a warm-up) to "last". */
    private static Run run(Child child, int count, long launched, String from) throws InterruptedException {
        long[] first = child.await("first", TIMEOUT);
        long[] start = from.equals("first") ? first : child.await(from, TIMEOUT);
        long[] last = child.await("last", TIMEOUT);
        return new Run(
                count,
                last[1] - start[1],
                last[2] - start[2],
                first[2],
                first[0] - launched,
                // Never below zero: the process CPU clock ticks every 10 ms while the harness's threads' clocks do
                // not, so over the smoke run's few milliseconds the difference can come out negative.
                Math.max(0, child.probed("last") - child.probed(from)));
    }

    /**
     * Settle's identity function at its defaults, fed 10 messages a second, from the harness's send of an input to its
     * receipt of the output (a reader on the output topic in this JVM; {@code System.nanoTime()} in the payload); then
     * the pipelined loop the same way, for what the broker's two writes and three dispatches take without Settle.
     */
    private void latencyAtTenPerSecond(Report report, int messages) throws Exception {
        long[] settle = latenciesAtTenPerSecond(Kind.SETTLE, messages);
        long[] loop = latenciesAtTenPerSecond(Kind.LOOP, messages);
        String over = " at 10 msg/s (" + messages + " inputs)";
        report.add(
                "identity function with output, input to output, p50" + over,
                Figure.of(Stats.percentile(settle.clone(), 50) / 1e6, "%.2f ms"),
                Figure.of(Stats.percentile(loop.clone(), 50) / 1e6, "pipelined loop %.2f ms"),
                Goal.NONE);
        report.add(
                "identity function with output, input to output, p99" + over,
                Figure.of(Stats.percentile(settle.clone(), 99) / 1e6, "%.2f ms"),
                Figure.of(Stats.percentile(loop.clone(), 99) / 1e6, "pipelined loop %.2f ms"),
                Goal.value("≤ 20 ms", v -> v <= 20));
    }

    private long[] latenciesAtTenPerSecond(Kind kind, int messages) throws Exception {
        String name = name("function-latency", kind);
        String topic = topic(name);
        String output = topic + "-out";
        List<String> command = kind == Kind.SETTLE
                ? workspace.settleRun(CONSUMER_JVM, functionManifest(name, topic, output, messages + 1))
                : workspace.javaMain(
                        CONSUMER_JVM,
                        PipelinedLoop.class,
                        pulsar.serviceUrl(),
                        topic,
                        name,
                        output,
                        String.valueOf(messages + 1));
        long[] latencies = new long[messages];
        try (org.apache.pulsar.client.api.Consumer<byte[]> reader = client.newConsumer(
                                org.apache.pulsar.client.api.Schema.BYTES)
                        .topic(output)
                        .subscriptionName("latency")
                        .subscriptionInitialPosition(org.apache.pulsar.client.api.SubscriptionInitialPosition.Earliest)
                        .subscribe();
                org.apache.pulsar.client.api.Producer<byte[]> producer = client.newProducer(
                                org.apache.pulsar.client.api.Schema.BYTES)
                        .topic(topic)
                        .enableBatching(false)
                        .create();
                Child child = Child.start(name, command, workspace.work())) {
            // A first message, not measured: the consumer is running once it comes out.
            producer.send(stamped());
            child.await("first", TIMEOUT);
            reader.acknowledge(reader.receive());
            Thread receiving = new Thread(() -> {
                try {
                    for (int i = 0; i < messages; i++) {
                        var message = reader.receive();
                        latencies[i] = System.nanoTime()
                                - java.nio.ByteBuffer.wrap(message.getValue()).getLong();
                        reader.acknowledge(message);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            receiving.start();
            long next = System.nanoTime();
            for (int i = 0; i < messages; i++) {
                next += 100_000_000L;
                java.util.concurrent.locks.LockSupport.parkNanos(next - System.nanoTime());
                producer.sendAsync(stamped());
            }
            receiving.join(TIMEOUT.toMillis());
        }
        out.printf(
                Locale.ROOT,
                "   %-28s latency at 10 msg/s: p50 %.2f ms, p99 %.2f ms%n",
                name,
                Stats.percentile(latencies.clone(), 50) / 1e6,
                Stats.percentile(latencies.clone(), 99) / 1e6);
        return latencies;
    }

    /**
     * Settle's identity function at its defaults kept at its bound of pending outputs ({@code maxPendingOutputs},
     * 1 000) of 1 KiB each for {@link Sizes#memoryRun}: this harness publishes 1 KiB inputs (batched, LZ4) faster than
     * the outputs are stored, so the receiver waits for room all along, and the input backlog grows. The child's heap
     * after each collection comes from its GC log ({@code -Xlog:gc}); the report compares the least of the last
     * minute with the least of the first.
     */
    private void pendingOutputsMemory(Report report) throws Exception {
        String name = name("memory", Kind.SETTLE);
        String topic = topic(name);
        String output = topic + "-out";
        Path gcLog = workspace.work().resolve(name + "-gc.log");
        byte[] payload = new byte[1024];
        java.util.Arrays.fill(payload, (byte) '.');
        long backlog;
        try (org.apache.pulsar.client.api.Producer<byte[]> producer = client.newProducer(
                                org.apache.pulsar.client.api.Schema.BYTES)
                        .topic(topic)
                        .compressionType(org.apache.pulsar.client.api.CompressionType.LZ4)
                        .blockIfQueueFull(true)
                        .create();
                Child child = Child.start(
                        name,
                        workspace.settleRun(
                                concat(CONSUMER_JVM, List.of("-Xlog:gc:file=" + gcLog)),
                                functionManifest(name, topic, output, Integer.MAX_VALUE)),
                        workspace.work())) {
            producer.send(payload);
            child.await("first", TIMEOUT);
            long end = System.nanoTime() + sizes.memoryRun().toNanos();
            while (System.nanoTime() < end) {
                producer.sendAsync(payload);
            }
            producer.flush();
            backlog = pulsarBacklog(topic, name);
        }
        List<double[]> afterGc = Heap.afterGc(Files.readAllLines(gcLog));
        if (afterGc.isEmpty()) {
            throw new IllegalStateException("no collection in " + gcLog + ": the memory run measured nothing");
        }
        // The child is stopped right after the run: its last collection marks the run's end.
        double end = afterGc.get(afterGc.size() - 1)[0];
        double start = end - sizes.memoryRun().toMillis();
        double first = Heap.leastMiB(afterGc, start, start + 60_000);
        double last = Heap.leastMiB(afterGc, end - 60_000, end);
        out.printf(
                Locale.ROOT,
                "   %s: least heap after GC %.0f MiB in the first minute, %.0f MiB in the last; %d collections; %,d inputs"
                        + " left%n",
                name,
                first,
                last,
                afterGc.size(),
                backlog);
        report.add(
                "identity function, 1 KiB outputs pending at maxPendingOutputs (1,000) for "
                        + sizes.memoryRun().toMinutes() + " min: least heap after GC, last minute",
                Figure.of(last, "%.0f MiB"),
                Figure.of(first, "first minute %.0f MiB"),
                Goal.ratio("≤ 1.1× first minute", r -> r <= 1.1));
        report.note(String.format(
                Locale.ROOT,
                "Memory run: %,d inputs were still waiting at its end, so outputs were pending at the bound throughout.",
                backlog));
    }

    /** The subscription's backlog, from the broker's admin API. */
    private long pulsarBacklog(String topic, String subscription) throws Exception {
        String stats = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(pulsar.adminUrl() + "/admin/v2/"
                                        + topic.replace("persistent://", "persistent/") + "/stats"))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString())
                .body();
        java.util.regex.Matcher matcher = java.util.regex.Pattern.compile(
                        "\"" + subscription + "\":\\{.*?\"msgBacklog\":(\\d+)")
                .matcher(stats);
        return matcher.find() ? Long.parseLong(matcher.group(1)) : -1;
    }

    /** 100 bytes, beginning with {@code System.nanoTime()}. */
    private static byte[] stamped() {
        return java.nio.ByteBuffer.allocate(100).putLong(System.nanoTime()).array();
    }

    /**
     * The identity function with an output at {@code exactly-once}, with its default commit batching and with one
     * transaction per delivery ({@code commitBatch: {maxDeliveries: 1}}), against the same function at at-least-once
     * (its default), rounds rotating which goes first: drain rate, consumer and broker CPU per message, and the commit
     * latency each exactly-once runtime measured ({@code settle_transaction_commit_duration_seconds}, read from its
     * {@code /metrics} once the drain is over: p50 and p99 interpolated within the histogram's buckets, as Prometheus'
     * {@code histogram_quantile} does).
     */
    private void exactlyOnce(Report report) throws Exception {
        // A tenth of the no-op backlog (20 000 in the full run): a fortieth drained in 1-2 s a run, too short to tell
        // the contenders apart within the rounds' spread.
        int count = Math.max(500, sizes.noOpMessages() / 10);
        String[] contenders = {"exactly-once", "exactly-once-1", "at-least-once"};
        String[] manifestLines = {
            "    guarantee: exactly-once\n", "    guarantee: exactly-once\n    commitBatch: {maxDeliveries: 1}\n", ""
        };
        List<double[]> rounds = new ArrayList<>();
        for (int round = 0; round < sizes.rounds(); round++) {
            // Per contender: rate, consumer CPU, broker CPU, commit p50, commit p99.
            double[] figures = new double[5 * contenders.length];
            for (int i = 0; i < contenders.length; i++) {
                int c = (round + i) % contenders.length;
                boolean exactly = c < 2;
                int http = freePort();
                String name = name(contenders[c], Kind.SETTLE);
                String topic = topic(name);
                Backlog.produce(client, topic, count, false);
                Path manifest = functionManifest(name, topic, topic + "-out", count, http, manifestLines[c]);
                long launched = System.currentTimeMillis();
                try (Child child = Child.start(
                        name, workspace.settleRun(CONSUMER_JVM, manifest), workspace.work(), brokerCpu::nanos)) {
                    Run run = run(child, count, launched);
                    int at = 5 * c;
                    figures[at] = run.perSecond();
                    figures[at + 1] = run.cpuMicrosPerMessage();
                    figures[at + 2] = run.brokerCpuMicrosPerMessage();
                    if (exactly) {
                        String metrics = metrics(http, name, count);
                        figures[at + 3] = commitQuantile(metrics, 0.5) * 1e3;
                        figures[at + 4] = commitQuantile(metrics, 0.99) * 1e3;
                    }
                    out.printf(
                            Locale.ROOT,
                            "   %-28s %,9.0f msg/s  %6.1f µs CPU/msg  broker %6.1f µs CPU/msg%s%n",
                            name,
                            run.perSecond(),
                            run.cpuMicrosPerMessage(),
                            run.brokerCpuMicrosPerMessage(),
                            exactly
                                    ? String.format(
                                            Locale.ROOT,
                                            "  commit p50 %.1f ms p99 %.1f ms",
                                            figures[at + 3],
                                            figures[at + 4])
                                    : "");
                }
            }
            rounds.add(figures);
        }
        String what = "identity function with output, exactly-once, unbatched inputs";
        report.add(
                what + ": throughput (commit batching, the default)",
                Figure.of(medianOf(rounds, 0), "%,.0f msg/s"),
                Figure.of(medianOf(rounds, 10), "at-least-once %,.0f msg/s"),
                Goal.ratio("≥ 0.5× at-least-once", r -> r >= 0.5));
        report.add(
                what + ": throughput (one transaction per delivery)",
                Figure.of(medianOf(rounds, 5), "%,.0f msg/s"),
                Figure.of(medianOf(rounds, 10), "at-least-once %,.0f msg/s"),
                Goal.NONE);
        for (int c = 0; c < 2; c++) {
            String mode = c == 0 ? " (commit batching)" : " (one per delivery)";
            report.add(
                    what + ": consumer CPU per message" + mode,
                    Figure.of(medianOf(rounds, 5 * c + 1), "%.1f µs"),
                    Figure.of(medianOf(rounds, 11), "at-least-once %.1f µs"),
                    Goal.NONE);
            report.add(
                    what + ": broker CPU per message" + mode,
                    Figure.of(medianOf(rounds, 5 * c + 2), "%.1f µs"),
                    Figure.of(medianOf(rounds, 12), "at-least-once %.1f µs"),
                    Goal.NONE);
            report.add(
                    what + ": commit latency p50" + mode,
                    Figure.of(medianOf(rounds, 5 * c + 3), "%.1f ms"),
                    null,
                    Goal.NONE);
            report.add(
                    what + ": commit latency p99" + mode,
                    Figure.of(medianOf(rounds, 5 * c + 4), "%.1f ms"),
                    null,
                    Goal.NONE);
        }
    }

    private static double medianOf(List<double[]> rounds, int figure) {
        return Stats.median(rounds.stream().mapToDouble(round -> round[figure]).toArray());
    }

    /**
     * The exactly-once child's metrics once all {@code count} deliveries are settled, so committed (the last call's
     * marker comes before its commit).
     */
    private static String metrics(int http, String subscription, int count) throws Exception {
        java.net.http.HttpClient web = java.net.http.HttpClient.newHttpClient();
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        String of = "subscription=\"" + subscription + "\"";
        while (true) {
            String body = web.send(
                            java.net.http.HttpRequest.newBuilder(
                                            java.net.URI.create("http://127.0.0.1:" + http + "/metrics"))
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString())
                    .body();
            double done = body.lines()
                    .filter(line -> line.startsWith("settle_outcomes_total{")
                            && line.contains("outcome=\"ack\"")
                            && line.contains(of))
                    .mapToDouble(line -> Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                    .findFirst()
                    .orElse(0);
            if (done >= count || System.nanoTime() > deadline) {
                return body;
            }
            Thread.sleep(20);
        }
    }

    /**
     * The {@code q} quantile of the commit durations, in seconds, from the classic histogram's cumulative buckets:
     * linear within the bucket it falls in, as Prometheus' {@code histogram_quantile}.
     */
    static double commitQuantile(String metrics, double q) {
        java.util.TreeMap<Double, Double> buckets = new java.util.TreeMap<>();
        java.util.regex.Matcher bucket = java.util.regex.Pattern.compile(
                        "settle_transaction_commit_duration_seconds_bucket\\{[^}]*le=\"([^\"]+)\"[^}]*\\} (\\S+)")
                .matcher(metrics);
        while (bucket.find()) {
            double le = bucket.group(1).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(bucket.group(1));
            buckets.put(le, Double.parseDouble(bucket.group(2)));
        }
        if (buckets.isEmpty()) {
            return Double.NaN;
        }
        double total = buckets.lastEntry().getValue();
        double rank = q * total;
        double lower = 0;
        double below = 0;
        for (java.util.Map.Entry<Double, Double> entry : buckets.entrySet()) {
            if (entry.getValue() >= rank) {
                if (entry.getKey().isInfinite()) {
                    return lower;
                }
                double inBucket = entry.getValue() - below;
                return inBucket == 0 ? entry.getKey() : lower + (entry.getKey() - lower) * (rank - below) / inBucket;
            }
            lower = entry.getKey();
            below = entry.getValue();
        }
        return lower;
    }

    private static int freePort() throws IOException {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** A manifest for the identity function on {@code topic}, publishing to {@code output} at the defaults. */
    private Path functionManifest(String name, String topic, String output, int count) throws IOException {
        return functionManifest(name, topic, output, count, 0, "");
    }

    /** As above, its HTTP port {@code http} (0: any) and {@code more} subscription keys (indented lines). */
    private Path functionManifest(String name, String topic, String output, int count, int http, String more)
            throws IOException {
        String yaml = String.format(
                        Locale.ROOT, """
                pulsar:
                  serviceUrl: %s
                http:
                  port: %d
                  bindAddress: 127.0.0.1
                subscriptions:
                  - name: %s
                    topics: [%s]
                    type: Shared
                    receiverQueueSize: 1000
                    function: dev.settle.benchmarks.handlers.IdentityFunction
                    jar: %s
                    output: %s
                    config:
                      count: "%d"
                """, pulsar.serviceUrl(), http, name, topic, workspace.handlerJar(), output, count)
                + more;
        Path file = workspace.work().resolve(name + ".yaml");
        Files.writeString(file, yaml);
        return file;
    }

    /** A first, unreported round: the broker's first dispatches run cold and are several times slower. */
    private void warmUp() throws Exception {
        if (sizes.warmUpMessages() > 0) {
            out.println("== warming the broker up");
            consume(Kind.LOOP, "warm-up-batched", sizes.warmUpMessages(), true, 1, 0);
            consume(Kind.LOOP, "warm-up-unbatched", sizes.warmUpMessages(), false, 1, 0);
        }
    }

    /** Rounds of {loop, Settle}, alternating which goes first, each on a fresh backlog. */
    private List<Run[]> noOp(boolean batching) throws Exception {
        String label = batching ? "noop-batched" : "noop-unbatched";
        List<Run[]> rounds = new ArrayList<>();
        for (int round = 0; round < sizes.rounds(); round++) {
            Run[] runs = new Run[Kind.values().length];
            Kind[] order = round % 2 == 0 ? new Kind[] {Kind.LOOP, Kind.SETTLE} : new Kind[] {Kind.SETTLE, Kind.LOOP};
            for (Kind kind : order) {
                runs[kind.ordinal()] =
                        consume(kind, label, sizes.noOpWarmUp(), sizes.noOpMessages(), batching, 1, 0, List.of());
            }
            rounds.add(runs);
        }
        return rounds;
    }

    private void compare(Report report, String what, List<Run[]> rounds) {
        report.add(
                what + ": throughput",
                Figure.of(median(rounds, Kind.SETTLE, Run::perSecond), "%,.0f msg/s"),
                Figure.of(median(rounds, Kind.LOOP, Run::perSecond), "loop %,.0f msg/s"),
                Goal.ratio("≥ 1.0× loop", r -> r >= 1.0));
        report.add(
                what + ": consumer CPU per message",
                Figure.of(median(rounds, Kind.SETTLE, Run::cpuMicrosPerMessage), "%.1f µs"),
                Figure.of(median(rounds, Kind.LOOP, Run::cpuMicrosPerMessage), "loop %.1f µs"),
                Goal.ratio("≤ 1.05× loop", r -> r <= 1.05));
    }

    /**
     * The batched no-op drain through Settle with {@code tracing} off and on, rounds alternating which goes first.
     * On, every message gets a handling span, exported over OTLP/HTTP to {@link OtlpSink} (docs/observability.md,
     * "Traces"); the batched producer's messages carry no trace context, so each handling starts a trace.
     */
    private void tracingOnAndOff(Report report) throws Exception {
        try (OtlpSink sink = OtlpSink.start()) {
            List<String> exportHere = List.of("-Dotel.exporter.otlp.endpoint=" + sink.url());
            List<Run> off = new ArrayList<>();
            List<Run> on = new ArrayList<>();
            for (int round = 0; round < sizes.rounds(); round++) {
                for (boolean traced : round % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false}) {
                    Run run = consume(
                            Kind.SETTLE,
                            traced ? "noop-traced" : "noop-untraced",
                            sizes.noOpWarmUp(),
                            sizes.noOpMessages(),
                            true,
                            1,
                            0,
                            traced ? exportHere : List.of(),
                            traced);
                    (traced ? on : off).add(run);
                }
            }
            out.printf(Locale.ROOT, "   OTLP receiver: %,d exports, %,d bytes%n", sink.requests(), sink.bytes());
            if (sink.requests() == 0) {
                report.note("Tracing rows: no span reached the OTLP receiver, so the traced runs exported nothing.");
            }
            report.add(
                    "no-op ack, batched producer, tracing on (OTLP/HTTP): throughput",
                    Figure.of(medianOf(on, Run::perSecond), "%,.0f msg/s"),
                    Figure.of(medianOf(off, Run::perSecond), "off %,.0f msg/s"),
                    Goal.NONE);
            report.add(
                    "no-op ack, batched producer, tracing on (OTLP/HTTP): consumer CPU per message",
                    Figure.of(medianOf(on, Run::cpuMicrosPerMessage), "%.1f µs"),
                    Figure.of(medianOf(off, Run::cpuMicrosPerMessage), "off %.1f µs"),
                    Goal.NONE);
        }
    }

    private static double medianOf(List<Run> runs, java.util.function.ToDoubleFunction<Run> figure) {
        double[] values = runs.stream().mapToDouble(figure).sorted().toArray();
        int middle = values.length / 2;
        return values.length % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
    }

    private void retryLatency(Report report) throws Exception {
        String name = name("retry", Kind.SETTLE);
        String topic = topic(name);
        Backlog.produce(client, topic, 1, false);
        Path manifest = manifest(name, topic, "RetryingHandler", 1, "retries", sizes.retries());
        try (Child child = Child.start(
                name,
                workspace.javaMain(
                        CONSUMER_JVM,
                        SettleInProcess.class,
                        "retry",
                        manifest.toString(),
                        String.valueOf(sizes.retries())),
                workspace.work())) {
            long[] retry = child.await("retry", TIMEOUT);
            out.printf("   retry: p50 %.2f ms, p99 %.2f ms over %d%n", retry[0] / 1e6, retry[1] / 1e6, retry[2]);
            String over = " (one message retried " + sizes.retries() + " times)";
            report.add(
                    "retry → redelivery, median" + over,
                    Figure.of(retry[0] / 1e6, "%.2f ms"),
                    null,
                    Goal.value("≤ 10 ms", v -> v <= 10));
            report.add("retry → redelivery, p99" + over, Figure.of(retry[1] / 1e6, "%.2f ms"), null, Goal.NONE);
        }
    }

    private void heldThroughBroker(Report report) throws Exception {
        String name = name("held", Kind.SETTLE);
        String topic = topic(name);
        int count = sizes.held();
        Path manifest = manifest(
                name,
                topic,
                "HoldingHandler",
                1,
                "count",
                count,
                "delayMillis",
                sizes.holdFor().toMillis());
        try (Child child = Child.start(
                name,
                workspace.javaMain(
                        CONSUMER_JVM, SettleInProcess.class, "held", manifest.toString(), String.valueOf(count)),
                workspace.work())) {
            child.await("ready", TIMEOUT);
            // Unbatched: a nack of a batched message (without batch-index ack) would bring back its whole batch.
            Backlog.produce(client, topic, count, false);
            long[] bytes = child.await("held-bytes", TIMEOUT);
            long[] lateness = child.await("held-lateness", TIMEOUT);
            out.printf(
                    "   held through the broker: %d B each (%d released before the measurement), lateness min %.2f"
                            + " ms, p50 %.2f ms, p99 %.2f ms, max %.2f ms%n",
                    bytes[0], bytes[1], lateness[3] / 1e6, lateness[0] / 1e6, lateness[1] / 1e6, lateness[4] / 1e6);
            if (bytes[1] > 0) {
                report.note("Held through the broker: " + bytes[1] + " messages came back before the heap was measured,"
                        + " so the heap figure is low; raise Sizes.holdFor.");
            }
            String at = String.format(
                    Locale.ROOT,
                    "retryAfter(%d s) through the broker, %,d held",
                    sizes.holdFor().toSeconds(),
                    count);
            report.add(
                    at + ": heap per held message (the message included)",
                    Figure.of(bytes[0], "%,.0f B"),
                    null,
                    Goal.NONE);
            report.add(at + ": lateness p50", Figure.of(lateness[0] / 1e6, "%.2f ms"), null, Goal.NONE);
            report.add(at + ": lateness p99", Figure.of(lateness[1] / 1e6, "%.2f ms"), null, Goal.NONE);
        }
    }

    private void heldInScheduler(Report report) throws Exception {
        int count = sizes.scheduled();
        String name = name("scheduler", Kind.SETTLE);
        try (Child child = Child.start(
                name,
                workspace.javaMain(
                        SCHEDULER_JVM,
                        SchedulerBench.class,
                        String.valueOf(count),
                        String.valueOf(sizes.scheduledMin().toMillis()),
                        String.valueOf(sizes.scheduledMax().toMillis()),
                        String.valueOf(sizes.schedulerWarmUp())),
                workspace.work())) {
            long[] bytes = child.await("scheduler-bytes", TIMEOUT);
            long[] lateness = child.await("scheduler-lateness", TIMEOUT);
            out.printf(
                    "   scheduler alone: %d B each (%d fired before the measurement), lateness p50 %.3f ms, p99 %.3f"
                            + " ms%n",
                    bytes[0], bytes[1], lateness[0] / 1e6, lateness[1] / 1e6);
            String at = String.format(
                    Locale.ROOT,
                    "HeldRetries alone, %,d held (delays %d–%d s)",
                    count,
                    sizes.scheduledMin().toSeconds(),
                    sizes.scheduledMax().toSeconds());
            report.add(
                    at + ": heap per held wait",
                    Figure.of(bytes[0], "%,.0f B"),
                    null,
                    Goal.value("≤ 200 B", v -> v <= 200));
            report.add(at + ": lateness p50", Figure.of(lateness[0] / 1e6, "%.3f ms"), null, Goal.NONE);
            report.add(
                    at + ": lateness p99",
                    Figure.of(lateness[1] / 1e6, "%.3f ms"),
                    null,
                    Goal.value("≤ 10 ms", v -> v <= 10));
        }
    }

    /**
     * From launching the process (wall clock here) to the first handler call (wall clock there): Settle without
     * and with an AppCDS archive, against the loop. The archive comes from one training run of the same start
     * ({@code -XX:ArchiveClassesAtExit}, written when the child is stopped), as the image makes its own at build.
     */
    private void runToFirstMessage(Report report) throws Exception {
        Path archive = workspace.work().resolve("settle-run.jsa");
        Files.deleteIfExists(archive);
        consume(Kind.SETTLE, "cds-training", 0, 1, false, 1, 0, List.of("-XX:ArchiveClassesAtExit=" + archive));
        boolean withCds = Files.isRegularFile(archive);
        List<String> cds = List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto");
        List<Run[]> rounds = new ArrayList<>();
        List<Run> cdsRuns = new ArrayList<>();
        for (int round = 0; round < sizes.rounds(); round++) {
            Run[] runs = new Run[Kind.values().length];
            Kind[] order = round % 2 == 0 ? new Kind[] {Kind.SETTLE, Kind.LOOP} : new Kind[] {Kind.LOOP, Kind.SETTLE};
            for (Kind kind : order) {
                runs[kind.ordinal()] = consume(kind, "start", 0, 1, false, 1, 0, List.of());
            }
            if (withCds) {
                cdsRuns.add(consume(Kind.SETTLE, "start-cds", 0, 1, false, 1, 0, cds));
            }
            rounds.add(runs);
        }
        report.add(
                "`settle run` launched to first message handled (broker up, message waiting)",
                Figure.of(median(rounds, Kind.SETTLE, run -> run.launchToFirstMillis()), "%,.0f ms"),
                Figure.of(median(rounds, Kind.LOOP, run -> run.launchToFirstMillis()), "loop %,.0f ms"),
                Goal.value("≤ 1.5 s", v -> v <= 1500));
        if (withCds) {
            report.add(
                    "the same with an AppCDS archive of the runtime (-XX:SharedArchiveFile)",
                    Figure.of(
                            Stats.median(cdsRuns.stream()
                                    .mapToDouble(Run::launchToFirstMillis)
                                    .toArray()),
                            "%,.0f ms"),
                    Figure.of(median(rounds, Kind.SETTLE, run -> run.launchToFirstMillis()), "without %,.0f ms"),
                    Goal.value("≤ 1.0 s", v -> v <= 1000));
        } else {
            report.note("No AppCDS archive was written by the training run (" + archive + "): the CDS row is missing.");
        }
    }

    /** Publishes a fresh backlog, then runs one consumer over it in a child JVM. */
    private Run consume(Kind kind, String label, int count, boolean batching, int concurrency, long sleepMillis)
            throws Exception {
        return consume(kind, label, 0, count, batching, concurrency, sleepMillis, List.of());
    }

    /**
     * As above, with {@code settleJvm} added to Settle's JVM options (not the loop's), measuring {@code count}
     * messages after {@code warmUp} unmeasured ones (both in the backlog): the consumer's steady state, once the JIT
     * has compiled its message path (in a first few seconds, the compiler threads spend more CPU than the message
     * path itself, measured from /proc).
     */
    private Run consume(
            Kind kind,
            String label,
            int warmUp,
            int count,
            boolean batching,
            int concurrency,
            long sleepMillis,
            List<String> settleJvm)
            throws Exception {
        return consume(kind, label, warmUp, count, batching, concurrency, sleepMillis, settleJvm, false);
    }

    /** As above, Settle's manifest saying {@code tracing: true} when {@code traced}. */
    private Run consume(
            Kind kind,
            String label,
            int warmUp,
            int count,
            boolean batching,
            int concurrency,
            long sleepMillis,
            List<String> settleJvm,
            boolean traced)
            throws Exception {
        String name = name(label, kind);
        String topic = topic(name);
        int total = warmUp + count;
        long publishing = System.nanoTime();
        Backlog.produce(client, topic, total, batching);
        double published = (System.nanoTime() - publishing) / 1e9;
        List<String> command = kind == Kind.SETTLE
                ? workspace.settleRun(
                        concat(CONSUMER_JVM, settleJvm),
                        traced(
                                manifest(
                                        name,
                                        topic,
                                        "CountingHandler",
                                        concurrency,
                                        "count",
                                        total,
                                        "warmUp",
                                        warmUp,
                                        "sleepMillis",
                                        sleepMillis),
                                traced))
                : workspace.javaMain(
                        CONSUMER_JVM,
                        LoopConsumer.class,
                        pulsar.serviceUrl(),
                        topic,
                        name,
                        String.valueOf(total),
                        String.valueOf(warmUp));
        long launched = System.currentTimeMillis();
        Run run;
        try (Child child = Child.start(name, command, workspace.work(), brokerCpu::nanos)) {
            run = run(child, count, launched, "warm");
        }
        if (count > 1) {
            out.printf(
                    Locale.ROOT,
                    "   %-28s %,9.0f msg/s  %6.1f µs CPU/msg  start-up CPU %,5d ms  launch→first %,5d ms"
                            + "  (backlog published in %.1f s)%n",
                    name,
                    run.perSecond(),
                    run.cpuMicrosPerMessage(),
                    run.startUpCpuNanos() / 1_000_000,
                    run.launchToFirstMillis(),
                    published);
        } else {
            out.printf(
                    Locale.ROOT,
                    "   %-28s launch→first %,5d ms  start-up CPU %,5d ms%n",
                    name,
                    run.launchToFirstMillis(),
                    run.startUpCpuNanos() / 1_000_000);
        }
        return run;
    }

    /** A manifest for one Shared subscription on {@code topic}, receiver queue 1000, the benchmark handlers' JAR. */
    /** {@code manifest}, with {@code tracing: true} added when {@code traced}. */
    private static Path traced(Path manifest, boolean traced) throws IOException {
        if (traced) {
            Files.writeString(
                    manifest,
                    Files.readString(manifest).replace("subscriptions:\n", "tracing: true\nsubscriptions:\n"));
        }
        return manifest;
    }

    private Path manifest(String name, String topic, String handler, int concurrency, Object... config)
            throws IOException {
        StringBuilder yaml = new StringBuilder();
        yaml.append("pulsar:\n  serviceUrl: ")
                .append(pulsar.serviceUrl())
                .append('\n')
                .append("http:\n  port: 0\n  bindAddress: 127.0.0.1\n")
                .append("subscriptions:\n")
                .append("  - name: ")
                .append(name)
                .append('\n')
                .append("    topics: [")
                .append(topic)
                .append("]\n")
                .append("    type: Shared\n")
                .append("    receiverQueueSize: 1000\n")
                .append("    handler: dev.settle.benchmarks.handlers.")
                .append(handler)
                .append('\n')
                .append("    jar: ")
                .append(workspace.handlerJar())
                .append('\n')
                .append("    concurrency: ")
                .append(concurrency)
                .append('\n')
                .append("    config:\n");
        for (int i = 0; i < config.length; i += 2) {
            yaml.append("      ")
                    .append(config[i])
                    .append(": \"")
                    .append(config[i + 1])
                    .append("\"\n");
        }
        Path file = workspace.work().resolve(name + ".yaml");
        Files.writeString(file, yaml);
        return file;
    }

    private String name(String label, Kind kind) {
        return String.format(
                Locale.ROOT,
                "%02d-%s-%s",
                ++runs,
                label,
                kind.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    }

    private static String topic(String name) {
        return "persistent://public/default/bench-" + name + "-" + System.currentTimeMillis();
    }

    private static List<String> concat(List<String> first, List<String> second) {
        List<String> all = new ArrayList<>(first);
        all.addAll(second);
        return List.copyOf(all);
    }

    private static double median(List<Run[]> rounds, Kind kind, ToDoubleFunction<Run> figure) {
        return Stats.median(rounds.stream()
                .map(runs -> runs[kind.ordinal()])
                .mapToDouble(figure)
                .toArray());
    }
}
