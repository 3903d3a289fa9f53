package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.isolation.HandlerWork;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * {@code java -jar settle-runtime.jar run}, as a separate process, against the real broker. The tests run side by side:
 * each has a process, topics and a folder of its own.
 */
@Execution(ExecutionMode.CONCURRENT)
class RunIT {
    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    private SettleProcess settle;

    /** A handler that says when it starts and ends each message, and takes {@code sleepMillis} over it. */
    private Path slowHandlerJar() {
        return TestJar.at(folder.resolve("slow.jar"))
                .source("test.SlowHandler", """
                        package test;
                        import dev.settle.sdk.*;
                        public class SlowHandler implements Handler<String> {
                            private long sleepMillis;
                            @Override public void open(HandlerContext context) {
                                sleepMillis = Long.parseLong(context.config().getOrDefault("sleepMillis", "0"));
                            }
                            @Override public Outcome handle(Delivery<String> delivery) throws Exception {
                                System.out.println("handling " + delivery.value());
                                // Deliberately slow: a SIGTERM must find these calls still running.
                                %s
                                System.out.println("done " + delivery.value());
                                return Outcome.ack();
                            }
                        }
                        """.formatted(HandlerWork.pause("sleepMillis")))
                .services("test.SlowHandler")
                .build();
    }

    private Path manifest(String topic, int concurrency, long sleepMillis) throws IOException {
        return manifest(topic, concurrency, sleepMillis, 0);
    }

    private Path manifest(String topic, int concurrency, long sleepMillis, int port) throws IOException {
        slowHandlerJar();
        Path manifest = folder.resolve("settle.yaml");
        return pulsar.manifest()
                .httpPort(port)
                .subscription("slow", topic)
                .type("Shared")
                .jar("slow.jar")
                .set("concurrency", concurrency)
                .config("sleepMillis", "\"" + sleepMillis + "\"")
                .writeTo(manifest);
    }

    private void start(Path manifest) throws IOException {
        settle = pulsar.settle(manifest);
    }

    private long lines(String prefix) {
        return settle.lines(prefix);
    }

    @Test
    void sigtermLetsInFlightHandlersFinishFlushesTheirAcksAndExitsZero() throws Exception {
        String topic = pulsar.topic("sigterm");
        int port = SettleProcess.freePort();
        long launched = System.nanoTime();
        // 8 s a call: all four still run when the fourth starts, even on a loaded machine (3 s was not always), and
        // finish well within the default 20 s grace.
        start(manifest(topic, 4, 8000, port));
        pulsar.publish(topic, 4, i -> "m" + i);
        await().atMost(Duration.ofSeconds(60)).until(() -> lines("handling ") == 4);
        System.out.printf("run: first message handled %.2f s after launch%n", (System.nanoTime() - launched) / 1e9);
        assertThat(lines("done ")).as("calls finished before SIGTERM").isZero();
        assertThat(SettleProcess.status(port, "/readyz")).isEqualTo(200);

        long signalled = System.nanoTime();
        // SIGTERM through the handle: Process.destroy() would also close our end of the process's output.
        assertThat(settle.process.toHandle().destroy()).isTrue();
        // The drain turns readiness off first, while the handlers are still running.
        await().atMost(Duration.ofSeconds(2))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> SettleProcess.status(port, "/readyz") == 503);
        assertThat(settle.process.isAlive())
                .as("still draining when /readyz answered 503")
                .isTrue();
        assertThat(settle.exitsWithin(30)).as("exited within 30 s").isTrue();
        double stopSeconds = (System.nanoTime() - signalled) / 1e9;
        System.out.printf("run: SIGTERM to exit %.2f s%n", stopSeconds);

        assertThat(settle.process.exitValue()).isZero();
        assertThat(lines("done ")).as("in-flight calls that finished").isEqualTo(4);
        try (Consumer<String> second = pulsar.client()
                .newConsumer(Schema.STRING)
                .topic(topic)
                .subscriptionName("slow")
                .subscriptionType(SubscriptionType.Shared)
                .subscribe()) {
            assertThat(second.receive(5, TimeUnit.SECONDS))
                    .as("a message delivered again")
                    .isNull();
        }
        assertThat(pulsar.backlog(topic, "slow")).isZero();
    }

    /** A manifest of one subscription "stubborn" on {@code topic}, with a handler of {@code body}, grace 2s. */
    private Path stubbornHandler(String topic, String body) throws IOException {
        TestJar.at(folder.resolve("stubborn.jar"))
                .source("test.Stubborn", """
                        package test;
                        import dev.settle.sdk.*;
                        public class Stubborn implements Handler<String> {
                        %s
                        }
                        """.formatted(body))
                .services("test.Stubborn")
                .build();
        return Files.writeString(folder.resolve("stubborn.yaml"), """
                pulsar:
                  serviceUrl: %s
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                shutdown:
                  grace: 2s
                subscriptions:
                  - name: stubborn
                    topics: [%s]
                    jar: stubborn.jar
                """.formatted(
                        pulsar.endpoints().serviceUrl(), topic));
    }

    @Test
    void aHandlerWhoseCloseNeverReturnsCannotKeepTheProcessAliveAfterSigterm() throws Exception {
        String topic = pulsar.topic("close-hangs");
        start(stubbornHandler(topic, """
                    @Override public Outcome handle(Delivery<String> delivery) {
                        System.out.println("handled " + delivery.value());
                        return Outcome.ack();
                    }
                    @Override public void close() throws Exception {
                        System.out.println("closing, forever"); // blocks until interrupted, never counted down
                        new java.util.concurrent.CountDownLatch(1).await();
                    }
                """));
        pulsar.publish(topic, "m");
        await().atMost(Duration.ofSeconds(60)).until(() -> lines("handled m") == 1);

        long signalled = System.nanoTime();
        assertThat(settle.process.toHandle().destroy()).isTrue();
        assertThat(settle.exitsWithin(20))
                .as("exited within 20 s of SIGTERM, grace 2s")
                .isTrue();
        System.out.printf("run: SIGTERM to exit with a hung close() %.2f s%n", (System.nanoTime() - signalled) / 1e9);

        assertThat(settle.process.exitValue()).isZero();
        assertThat(lines("closing, forever")).isEqualTo(1);
        assertThat(settle.output)
                .anyMatch(line -> line.contains("handler test.Stubborn")
                        && line.contains("did not return from close() within the 2s grace"));
    }

    @Test
    void aHandlerOutOfMemoryStopsTheRuntimeWithExitSeventyNamingTheSubscription() throws Exception {
        String topic = pulsar.topic("oom");
        start(stubbornHandler(topic, """
                    @Override public Outcome handle(Delivery<String> delivery) {
                        throw new OutOfMemoryError("Java heap space (thrown by the test handler)");
                    }
                """));
        pulsar.publish(topic, "m");

        assertThat(settle.exitsWithin(60)).as("the process stops by itself").isTrue();
        assertThat(settle.process.exitValue()).isEqualTo(Main.FATAL);
        assertThat(settle.output)
                .anyMatch(line -> line.startsWith("settle: subscription 'stubborn' hit")
                        && line.contains("OutOfMemoryError")
                        && line.contains("exiting 70"));
        assertThat(pulsar.backlog(topic, "stubborn"))
                .as("the message is not lost")
                .isEqualTo(1);
    }

    @Test
    void anInvalidManifestRefusesToStartWithExitTwoAndEveryProblem() throws Exception {
        Path manifest = folder.resolve("bad.yaml");
        Files.writeString(manifest, """
                pulsar:
                  serviceUrl: %s
                subscriptions:
                  - name: capped-failover
                    topics: [persistent://public/default/x]
                    type: Failover
                    jar: missing.jar
                    maxAttempts: 3
                    deadLetterTopic: persistent://public/default/x-dlq
                """.formatted(pulsar.endpoints().serviceUrl()));
        start(manifest);

        assertThat(settle.exitsWithin(60)).isTrue();
        assertThat(settle.process.exitValue()).isEqualTo(2);
        await().atMost(Duration.ofSeconds(5))
                .until(() -> settle.output.stream().anyMatch(l -> l.contains("refusing to start")));
        assertThat(settle.output)
                .anyMatch(line -> line.startsWith(manifest + ":") && line.contains("subscriptions[0].type"));
        assertThat(settle.output)
                .anyMatch(line -> line.startsWith(manifest + ":") && line.contains("subscriptions[0].jar"));
    }

    @Test
    void aJsonHandlerOnATopicWhoseSchemaIsStringRefusesToStartWithExitTwoNamingTheSchemaConflict() throws Exception {
        String topic = pulsar.topic("string-schema");
        pulsar.publish(topic, "not an order");
        TestJar.at(folder.resolve("orders.jar"))
                .source("test.Order", "package test; public record Order(String id, int quantity) {}")
                .source("test.Orders", """
                        package test;
                        import dev.settle.sdk.*;
                        public class Orders implements Handler<Order> {
                            @Override public Outcome handle(Delivery<Order> delivery) {
                                return Outcome.ack();
                            }
                        }
                        """)
                .services("test.Orders")
                .build();
        Path manifest = Files.writeString(
                folder.resolve("orders.yaml"), """
                pulsar:
                  serviceUrl: %s
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                subscriptions:
                  - name: orders
                    topics: [%s]
                    jar: orders.jar
                """.formatted(pulsar.endpoints().serviceUrl(), topic));
        start(manifest);

        assertThat(settle.exitsWithin(60)).as("the process stops by itself").isTrue();
        assertThat(settle.process.exitValue()).isEqualTo(Main.INVALID);
        assertThat(settle.output).noneMatch(line -> line.contains("cannot connect"));
        assertThat(settle.output)
                .anyMatch(line -> line.startsWith("settle: schema conflict: subscription 'orders' on "
                        + topic
                        + " reads messages as JSON, and the broker refused it: 'Incompatible schema: exists schema type STRING,"
                        + " new schema type JSON'. Publish to the topic with a schema that matches, change 'schema:'"));
        assertThat(settle.output).contains("settle: refusing to start");
    }
}
