package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import dev.settle.testbroker.Waits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The done-when test of durable delays (issue 44): {@value #MESSAGES} messages, each answered {@code retryAfter(30s)}
 * on its first attempt and acknowledged on the next, and {@code settle run} SIGKILLed {@value #KILL_AFTER_SECONDS} s
 * after the first attempts, then started again. With {@code durableDelays: true} the waits are copies on the delay
 * topic: none comes back before 30 s − 1 s after its first attempt (the broker's delayed delivery may hand a message
 * out up to its tick, 1 s, early), each is handled once more, on attempt 2, within 30 s + 10 s, and the delay topic
 * is left empty. Off (the settlement contract, docs/design.md section 1), the kill ends every wait: each message comes
 * back at once to the restarted runtime, on attempt 1 again (a crash is not counted), waits once more, and
 * none is lost (that run's first runtime answers {@value #UNWAITED_DELAY_MILLIS} ms, so "at once" has room). At exactly-once the copy and the original's acknowledgement commit together, and the same holds.
 */
// A minute and more of child processes (two 30 s waits, side by side): run with -Preliability, as the other kill tests.
@Tag("reliability")
@Execution(ExecutionMode.CONCURRENT)
class DurableDelayKillIT {
    /**
     * Messages of the at-least-once runs, all waiting when the kill comes, whatever their number: 1 000 (were 2 000
     * until the suite's CPU was counted, issue 43); {@code -Dsettle.durable.delay.messages=} runs another number.
     */
    static final int MESSAGES = Integer.getInteger("settle.durable.delay.messages", 1_000);

    static final int KILL_AFTER_SECONDS = 5;
    static final long DELAY_MILLIS = 30_000;
    /**
     * What the first runtime of the test without durable delays answers attempt 1 with: longer than the 30 s of the
     * others, so that "handled again before its delay ended" has room for a slow restart. Once, on a loaded build
     * machine, the restarted runtime handled m-00000 again 34.7 s after its first attempt (the first attempts of 2 000
     * messages, the 5 s before the kill and the restart all came before it): later than 30 s, and still not a wait.
     */
    static final long UNWAITED_DELAY_MILLIS = 120_000;
    /** What the restarted runtime of the test without durable delays answers attempt 1 with. */
    static final long RESTARTED_DELAY_MILLIS = 2_000;

    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @Test
    void durableDelaysSurviveASigkillNeitherEarlyNorLostNorTwice() throws Exception {
        assertDurable(killDuringTheWaits(true, "at-least-once", MESSAGES));
    }

    /**
     * The same at {@code guarantee: exactly-once}, where each copy and its original's acknowledgement commit in one
     * transaction: {@value #EXACTLY_ONCE_MESSAGES} messages, as every one of them is two transactions on a busy machine.
     */
    @Test
    void durableDelaysSurviveASigkillAtExactlyOnceToo() throws Exception {
        assertDurable(killDuringTheWaits(true, "exactly-once", EXACTLY_ONCE_MESSAGES));
    }

    static final int EXACTLY_ONCE_MESSAGES = 500;

    private static void assertDurable(Run run) {

        long earliest = Long.MAX_VALUE;
        long latest = 0;
        for (List<Call> calls : run.calls.values()) {
            if (calls.size() > 1) {
                earliest = Math.min(earliest, calls.get(1).millis - calls.get(0).millis);
                latest = Math.max(latest, calls.get(1).millis - calls.get(0).millis);
            }
        }
        System.out.printf(
                "durable delays, %d messages: handled again %.1f to %.1f s after the first attempt%n",
                run.calls.size(), earliest / 1e3, latest / 1e3);
        for (String value : run.values()) {
            List<Call> calls = run.calls.get(value);
            assertThat(calls)
                    .as("the calls of %s: attempt 1, then its copy on attempt 2", value)
                    .extracting(Call::attempt)
                    .containsExactly(1, 2);
            long after = calls.get(1).millis - calls.get(0).millis;
            assertThat(after)
                    .as("%s handled again %d ms after its first attempt", value, after)
                    .isBetween(DELAY_MILLIS - 1_000, DELAY_MILLIS + 10_000);
        }
        assertThat(run.delayBacklog).as("left on the delay topic").isZero();
        assertThat(run.settle.output)
                .as("the restarted runtime's metric of the copies it read back")
                .noneMatch(line -> line.contains("refused and acknowledged"));
    }

    /**
     * The restarted runtime answers {@code retryAfter(}{@value #RESTARTED_DELAY_MILLIS} ms{@code )}: its wait is not
     * what is timed here (only that each message comes back at once, on attempt 1 again, and ends acknowledged), and a
     * second 30 s wait made this the class's longest test (60 s of its 105).
     */
    @Test
    void withoutDurableDelaysTheKillEndsEveryWaitAndNothingIsLost() throws Exception {
        Run run = killDuringTheWaits(false, "at-least-once", MESSAGES);

        for (String value : run.values()) {
            List<Call> calls = run.calls.get(value);
            // Back at once to the restarted runtime, uncounted, so it waits once more: three calls.
            assertThat(calls)
                    .as("the calls of %s", value)
                    .extracting(Call::attempt)
                    .containsExactly(1, 1, 2);
            long after = calls.get(1).millis - calls.get(0).millis;
            assertThat(after)
                    .as("%s handled again %d ms after its first attempt: before its delay ended", value, after)
                    .isLessThan(UNWAITED_DELAY_MILLIS - 1_000);
        }
    }

    private record Call(int attempt, long millis) {}

    private record Run(Map<String, List<Call>> calls, long delayBacklog, SettleProcess settle, int messages) {
        List<String> values() {
            List<String> values = new ArrayList<>();
            for (int i = 0; i < messages; i++) {
                values.add(String.format("m-%05d", i));
            }
            assertThat(calls.keySet()).containsExactlyInAnyOrderElementsOf(values);
            return values;
        }
    }

    /**
     * Runs {@code messages} at {@code guarantee} through a handler that answers {@code retryAfter(30s)} on attempt 1
     * (without durable delays {@value #UNWAITED_DELAY_MILLIS} ms, and {@value #RESTARTED_DELAY_MILLIS} ms in the
     * restarted runtime) and acknowledges later
     * ones, SIGKILLs the runtime {@link #KILL_AFTER_SECONDS} s after the first attempts were all made, starts it again
     * and waits until every message was acknowledged; returns every call, by value, in the order made.
     */
    private Run killDuringTheWaits(boolean durable, String guarantee, int messages) throws Exception {
        Path calls = folder.resolve("calls");
        TestJar.at(folder.resolve("later.jar"))
                .source("com.example.later.Later", """
                        package com.example.later;
                        import dev.settle.sdk.*;
                        import java.io.IOException;
                        import java.nio.charset.StandardCharsets;
                        import java.nio.file.*;
                        import java.time.Duration;
                        public class Later implements Handler<String> {
                            private Path calls;
                            private Duration delay;
                            @Override public void open(HandlerContext context) {
                                calls = Path.of(context.config().get("calls"));
                                delay = Duration.ofMillis(Long.parseLong(context.config().get("delayMillis")));
                            }
                            @Override public Outcome handle(Delivery<String> delivery) throws IOException {
                                String line = delivery.value() + " " + delivery.attempt() + " "
                                        + System.currentTimeMillis() + "\\n";
                                // One write per call, appended: a SIGKILL loses no call that returned.
                                synchronized (Later.class) {
                                    Files.writeString(calls, line, StandardCharsets.UTF_8,
                                            StandardOpenOption.CREATE, StandardOpenOption.APPEND);
                                }
                                return delivery.attempt() == 1 ? Outcome.retryAfter(delay) : Outcome.ack();
                            }
                        }
                        """)
                .services("com.example.later.Later")
                .build();
        String input = "persistent://public/default/durable-" + durable + "-" + System.nanoTime();
        // Its own subscription name, so its own delay topic: <name>-delay.
        String name = "later-" + durable + "-" + guarantee + "-" + System.nanoTime();
        pulsar.backlog(input, name, messages, i -> String.format("m-%05d", i));
        Path manifest = folder.resolve("later.yaml");
        String subscription = """
                subscriptions:
                  - name: %s
                    topics: [%s]
                    handler: com.example.later.Later
                    jar: later.jar
                    config: {calls: %s, delayMillis: "%%d"}
                    concurrency: 16
                    guarantee: %s
                    handlerTimeout: 5s
                %s""".formatted(name, input, calls, guarantee, durable ? "    durableDelays: true\n" : "");
        pulsar.manifest(manifest, subscription.formatted(durable ? DELAY_MILLIS : UNWAITED_DELAY_MILLIS));

        long started = System.nanoTime();
        SettleProcess first = pulsar.closeAfterTest(SettleProcess.run(manifest, "durable " + durable + " first"));
        Waits.until(
                "every message's first attempt made",
                Duration.ofMinutes(2),
                () -> read(calls).size(),
                made -> made == messages);
        Waits.pause(
                Duration.ofSeconds(KILL_AFTER_SECONDS), "the kill lands in the middle of the waits, as the issue says");
        first.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        System.out.printf(
                "durable delays %s, %s: SIGKILL %.1f s after the start, %d calls made%n",
                durable, guarantee, (System.nanoTime() - started) / 1e9, lines(calls));

        if (!durable) {
            // Every wait ended with the kill: the restarted runtime's own wait is not timed (see the test).
            pulsar.manifest(manifest, subscription.formatted(RESTARTED_DELAY_MILLIS));
        }
        SettleProcess second = pulsar.closeAfterTest(SettleProcess.run(manifest, "durable " + durable + " second"));
        Waits.until(
                "every message acknowledged",
                Duration.ofMinutes(2),
                () -> pulsar.backlog(input, name),
                backlog -> backlog == 0);
        Map<String, List<Call>> made = Waits.until(
                "every message handled on attempt 2",
                Duration.ofMinutes(1),
                () -> read(calls),
                all -> all.size() == messages
                        && all.values().stream().allMatch(each -> each.get(each.size() - 1).attempt >= 2));
        long delayBacklog = 0;
        if (durable) {
            String delayTopic = "persistent://public/default/" + name + "-delay";
            // Acknowledgements go in 100 ms groups.
            delayBacklog = Waits.until(
                    "the delay topic empty",
                    Duration.ofSeconds(30),
                    () -> pulsar.backlog(delayTopic, name),
                    n -> n == 0);
        }
        System.out.printf(
                "durable delays %s, %s: %d calls for %d messages, %.1f s in all%n",
                durable, guarantee, lines(calls), messages, (System.nanoTime() - started) / 1e9);
        second.sigterm();
        assertThat(second.exitsWithin(30)).isTrue();
        return new Run(made, delayBacklog, second, messages);
    }

    private static long lines(Path calls) throws Exception {
        return Files.exists(calls) ? Files.readAllLines(calls).size() : 0;
    }

    /** The calls recorded so far, by value, in the order they were made. */
    private static Map<String, List<Call>> read(Path calls) throws Exception {
        Map<String, List<Call>> byValue = new HashMap<>();
        if (!Files.exists(calls)) {
            return byValue;
        }
        for (String line : Files.readAllLines(calls)) {
            String[] parts = line.split(" ");
            if (parts.length != 3) {
                continue; // a line a kill cut short
            }
            byValue.computeIfAbsent(parts[0], value -> new ArrayList<>())
                    .add(new Call(Integer.parseInt(parts[1]), Long.parseLong(parts[2])));
        }
        return byValue;
    }
}
