package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.settle.runtime.Settle;
import dev.settle.testbroker.Waits;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.apache.pulsar.client.api.Producer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;
import org.slf4j.LoggerFactory;

/**
 * A hundred swaps of a running Settle's handler JAR: the retired class loaders are collected, the JVM's metaspace grows
 * by less than 10 MiB, and a generation whose thread pins its loader is named in one warning. A class of its own so
 * that only this measurement runs alone: the metaspace is the JVM's, and classes running beside it load classes too.
 */
@Tag("alone") // runs in the runtime-it-alone module
@Isolated("it measures the JVM's metaspace across 100 swaps")
class LiveCodeMetaspaceIT extends LiveCodeHarness {
    @Test
    void aHundredSwapsLeaveTheRetiredLoadersCollectedAndALeakedThreadIsNamed() throws Exception {
        String topic = topic("hundred");
        recorder("manifest.jar", "M");
        byte[] a = bytes(recorder("a.jar", "A"));
        byte[] b = bytes(recorder("b.jar", "B"));
        byte[] leaky = bytes(recorder(
                "leaky.jar",
                "L",
                "Thread t = new Thread(() -> { try { new java.util.concurrent.CountDownLatch(1).await(); }"
                        + " catch (InterruptedException e) { } },"
                        + " \"leaky-handler-thread\"); t.setDaemon(true); t.start();",
                ""));
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        Logger retiredLog = (Logger) LoggerFactory.getLogger(RetiredLoaders.class);
        retiredLog.addAppender(logged);
        try {
            Settle settle = start(manifest(topic, "retiredLoaderCheck: 1s", 1));
            LiveCode live = settle.live().orElseThrow();
            try (Producer<String> producer = producer(topic)) {
                for (int i = 0; i < 4; i++) {
                    assertThat(deploy(settle, i % 2 == 0 ? a : b).statusCode()).isEqualTo(200);
                }
                long before = metaspaceAfterGc(live);
                for (int i = 0; i < 100; i++) {
                    HttpResponse<String> answer = deploy(settle, i % 2 == 0 ? a : b);
                    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
                    if (i % 10 == 0) {
                        handledBy(producer, "during-" + i);
                    }
                }
                long after = metaspaceAfterGc(live);
                System.out.printf(
                        "100 swaps: metaspace %d KiB before, %d KiB after (growth %d KiB); class loaders alive %d%n",
                        before / 1024, after / 1024, (after - before) / 1024, live.classLoadersAlive());
                assertThat(after - before).isLessThan(10L * 1024 * 1024);
                // The running generation's loader and the manifest's (the deployment's, closed at stop).
                assertThat(live.classLoadersAlive()).isLessThanOrEqualTo(2);
                assertThat(handledBy(producer, "after-hundred")).isIn("A", "B");

                assertThat(deploy(settle, leaky).statusCode()).isEqualTo(200);
                assertThat(deploy(settle, a).statusCode()).isEqualTo(200);
                await(
                        () -> logged.list.stream()
                                .anyMatch(event -> event.getFormattedMessage().contains("leaky-handler-thread")),
                        Duration.ofSeconds(20));
                Waits.during(
                        "one warning of the leaky generation at most",
                        Duration.ofSeconds(2),
                        () -> logged.list.stream()
                                        .filter(event ->
                                                event.getFormattedMessage().contains("threads that pin it"))
                                        .count()
                                <= 1,
                        () -> logged.list);
                List<String> warnings = logged.list.stream()
                        .map(ILoggingEvent::getFormattedMessage)
                        .filter(message -> message.contains("threads that pin it"))
                        .toList();
                assertThat(warnings).hasSize(1);
                assertThat(warnings.get(0)).contains("leaky-handler-thread").contains("generation 106");
                assertThat(handledBy(producer, "after-leak")).isEqualTo("A");
            }
        } finally {
            retiredLog.detachAppender(logged);
        }
    }

    /** Metaspace in use once the retired loaders are gone (a few GCs, until the live count stops falling). */
    private static long metaspaceAfterGc(LiveCode live) throws InterruptedException {
        for (int i = 0; i < 10 && live.classLoadersAlive() > 2; i++) {
            System.gc();
            Waits.pause(Duration.ofMillis(200), "a collection's reference processing, before the next count");
        }
        System.gc();
        Function<MemoryPoolMXBean, Long> used = pool -> pool.getUsage().getUsed();
        return ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(pool -> pool.getName().equals("Metaspace"))
                .map(used)
                .findFirst()
                .orElseThrow();
    }
}
