package dev.settle.runtime;

import static dev.settle.testbroker.PulsarFixture.duplicates;
import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.Waits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pulsar.client.impl.ClientCnx;
import org.apache.pulsar.client.impl.PulsarClientImpl;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly-once while the runtime's connections to the broker drop mid-work, as a keep-alive timeout drops them on a
 * loaded machine (a loaded ExactlyOnceKillIT run read 269 + 141 outputs twice after one). A handler that publishes one
 * output per input works off a backlog of 10 000 at {@code guarantee: exactly-once}, concurrency 16, while the test
 * closes the client side of every connection of the runtime's Pulsar clients, once a second, up to 12 times, until 90%
 * are settled: output sends, acknowledgements in transactions and commits are on their way each time. The broker has no
 * deduplication on. With the outage circuit breaker on (the default) and off, every input's output is read exactly once
 * by a fresh read-committed consumer, and the backlog is 0 (6 rounds in each run). Before sends in a transaction failed
 * on a drop, 79 outputs were read twice with the breaker off after 5 rounds: the client sent the unconfirmed ones again.
 */
@Tag("reliability") // about 200 s: a fault test, run by .ci/run's -Preliability like ExactlyOnceKillIT
class ExactlyOnceConnectionDropIT {
    private static final int MESSAGES = 10_000;
    private static final int DROPS = 12;

    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @Test
    void droppedConnectionsMidCommitNeitherLoseNorDoubleAnOutputWithTheBreakerOn() throws Exception {
        Map<String, Integer> outputs = run("dropped-on", "");

        assertThat(outputs).hasSize(MESSAGES);
        assertThat(duplicates(outputs)).as("outputs read twice").isZero();
    }

    @Test
    void droppedConnectionsMidCommitNeitherLoseNorDoubleAnOutputWithTheBreakerOff() throws Exception {
        Map<String, Integer> outputs = run("dropped-off", "breaker: {enabled: false}");

        assertThat(outputs).hasSize(MESSAGES);
        assertThat(duplicates(outputs)).as("outputs read twice").isZero();
    }

    private Map<String, Integer> run(String name, String breaker) throws Exception {
        TestJar.at(folder.resolve("auditor.jar"))
                .source("com.example.audit.Auditor", """
                        package com.example.audit;
                        import dev.settle.sdk.*;
                        public class Auditor implements Handler<String> {
                            private Publisher<String> audit;
                            @Override public void open(HandlerContext context) {
                                audit = context.publisher(context.config().get("auditTopic"), String.class);
                            }
                            @Override public Outcome handle(Delivery<String> delivery) {
                                audit.publish(delivery, "seen " + delivery.value());
                                return Outcome.ack();
                            }
                        }
                        """)
                .services("com.example.audit.Auditor")
                .build();
        String input = pulsar.topic(name);
        String output = input + "-out";
        pulsar.admin().topics().createNonPartitionedTopic(output);
        pulsar.backlog(input, "auditor", MESSAGES, i -> String.format("m-%05d", i));
        Path manifest = pulsar.manifest(folder.resolve(name + ".yaml"), """
                subscriptions:
                  - name: auditor
                    topics: [%s]
                    handler: com.example.audit.Auditor
                    jar: auditor.jar
                    config: {auditTopic: %s}
                    concurrency: 16
                    handlerTimeout: 5s
                    guarantee: exactly-once
                    %s
                """.formatted(input, output, breaker));
        Settle settle = InThisJvm.start(pulsar, manifest);

        AtomicInteger drops = new AtomicInteger();
        long deadline = System.nanoTime() + Duration.ofMinutes(4).toNanos();
        for (int round = 0;
                round < DROPS && pulsar.backlog(input, "auditor") > MESSAGES / 10 && System.nanoTime() < deadline;
                round++) {
            // As the client's keep-alive timeout does (PulsarHandler.handleKeepAliveTimeout): its side of the
            // connection closed, whatever is on its way.
            // Found anew each time: the transactions' client is made once the first exactly-once subscription starts.
            List<PulsarClientImpl> clients = RuntimeClients.of(settle);
            assertThat(clients).as("the runtime's Pulsar clients").isNotEmpty();
            for (PulsarClientImpl client : clients) {
                for (CompletableFuture<ClientCnx> connection :
                        client.getCnxPool().getConnections()) {
                    ClientCnx cnx = connection.getNow(null);
                    if (cnx != null && cnx.ctx() != null) {
                        cnx.ctx().close();
                        drops.incrementAndGet();
                    }
                }
            }
            // The pace of the drops: every second, so the runtime reconnects and works between them.
            Waits.pause(Duration.ofSeconds(1), "the next connection drop");
        }
        System.out.printf("%s: %d connections dropped while the backlog was worked off%n", name, drops.get());
        Waits.until(
                "the backlog worked off after the drops",
                Duration.ofMinutes(3),
                () -> pulsar.backlog(input, "auditor") == 0,
                () -> StallReport.of(pulsar.endpoints(), input, List.of(settle)));
        settle.close();
        Map<String, Integer> outputs = pulsar.copies(output, MESSAGES);
        System.out.printf("%s: %d distinct outputs, %d read twice%n", name, outputs.size(), duplicates(outputs));
        return outputs;
    }
}
