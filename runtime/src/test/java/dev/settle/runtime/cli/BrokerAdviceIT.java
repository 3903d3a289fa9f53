package dev.settle.runtime.cli;

import static dev.settle.testbroker.SettleProcess.freePort;
import static dev.settle.testbroker.SettleProcess.status;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;
import static org.awaitility.Awaitility.await;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarBroker;
import dev.settle.testbroker.PulsarEndpoints;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * What {@code settle run} says when the broker is not there or goes away, read in its output as a user reads it: the
 * plain cause and what to do, never "create it, or grant this role produce permission" for a broker that is down, nor
 * the client's four wrapped exception class names.
 */
@ExtendWith(PulsarBroker.class)
@Execution(ExecutionMode.CONCURRENT)
class BrokerAdviceIT {
    @TempDir
    Path folder;

    @Test
    void aFunctionAndAHandlerWithNoBrokerAreToldTheConnectionIsRefusedAndToStartSettleDev() throws Exception {
        TaggerJar.build(folder.resolve("tagger.jar"), "com.example.tag.Tagger", 0);
        echoJar();
        String address = "127.0.0.1:" + freePort();
        Path function = Files.writeString(
                folder.resolve("function.yaml"), PulsarFixture.manifestText("pulsar://" + address, freePort(), """
                subscriptions:
                  - name: tagger
                    topics: [persistent://public/default/advice-in]
                    function: com.example.tag.Tagger
                    jar: tagger.jar
                    output:
                      topic: persistent://public/default/advice-out
                """));
        Path handler = Files.writeString(
                folder.resolve("handler.yaml"), PulsarFixture.manifestText("pulsar://" + address, freePort(), """
                subscriptions:
                  - name: echo
                    topics: [persistent://public/default/advice-in]
                    jar: echo.jar
                """));
        String plain = "connection refused at " + address + " — is `settle dev` running?";
        try (SettleProcess functionRun = SettleProcess.run(function, "function, no broker");
                SettleProcess handlerRun = SettleProcess.run(handler, "handler, no broker")) {
            // The client gives up on the output's producer, and on a subscription, after its 30 s operation timeout.
            await().atMost(Duration.ofSeconds(90))
                    .until(() -> !lines(functionRun, "the output topic").isEmpty()
                            && !lines(handlerRun, "cannot subscribe yet").isEmpty());
            assertThat(lines(functionRun, "the output topic"))
                    .singleElement(STRING)
                    .contains("the output topic persistent://public/default/advice-out cannot be written yet: " + plain
                            + ". Retried every 5 s")
                    .doesNotContain("grant", "Exception");
            assertThat(lines(handlerRun, "cannot subscribe yet"))
                    .first(STRING)
                    .contains("subscription 'echo': cannot subscribe yet (" + plain + ")")
                    .doesNotContain("Exception");
            for (SettleProcess run : List.of(functionRun, handlerRun)) {
                assertThat(lines(run, "the broker at pulsar://" + address + " cannot be reached: " + plain))
                        .as("Settle's own line, once")
                        .hasSize(1);
            }
        }
    }

    @Test
    void aBrokerLostMidRunGetsOneLineWithItsCauseAndOneWhenItIsBack(PulsarEndpoints pulsar) throws Exception {
        echoJar();
        int port = freePort();
        int http = freePort();
        int realPort = URI.create(pulsar.serviceUrl()).getPort();
        String url = "pulsar://127.0.0.1:" + port;
        String topic = "persistent://public/default/lost-" + System.nanoTime();
        Path manifest = Files.writeString(
                folder.resolve("echo.yaml"), PulsarFixture.manifestText(url, http, """
                subscriptions:
                  - name: echo
                    topics: [%s]
                    jar: echo.jar
                """.formatted(topic)));
        TcpForwarder broker = TcpForwarder.listen(port, realPort);
        try (SettleProcess settle = SettleProcess.run(manifest, "broker lost");
                PulsarClient client =
                        PulsarClient.builder().serviceUrl(pulsar.serviceUrl()).build();
                Producer<String> producer =
                        client.newProducer(Schema.STRING).topic(topic).create()) {
            await().atMost(Duration.ofSeconds(60)).until(() -> status(http, "/readyz") == 200);
            producer.send("before");
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> !lines(settle, "handled before").isEmpty());

            broker.close(); // the broker's port now refuses, and every connection to it is dropped
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> !lines(settle, "the broker at " + url).isEmpty());
            assertThat(lines(settle, "the broker at " + url))
                    .singleElement(STRING)
                    // "cannot be reached" when the watch had not yet seen the consumer connected: the test's own race.
                    .containsPattern(" (is lost|cannot be reached): connection refused at 127.0.0.1:" + port
                            + " — is `settle dev` running\\?; subscriptions \\[echo\\] wait for it");

            broker = TcpForwarder.listen(port, realPort);
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> lines(settle, "the broker at " + url).size() == 2);
            assertThat(lines(settle, "the broker at " + url).get(1))
                    .containsPattern(
                            "the broker at " + url + " (is back|answers now): every subscription is" + " connected");
            producer.send("after");
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> !lines(settle, "handled after").isEmpty());
        } finally {
            broker.close();
        }
    }

    private void echoJar() {
        TestJar.at(folder.resolve("echo.jar"))
                .source("test.Echo", """
                        package test;
                        import dev.settle.sdk.*;
                        public class Echo implements Handler<String> {
                            @Override public Outcome handle(Delivery<String> delivery) {
                                System.out.println("handled " + delivery.value());
                                return Outcome.ack();
                            }
                        }
                        """)
                .services("test.Echo")
                .build();
    }

    private static List<String> lines(SettleProcess settle, String containing) {
        return settle.output.stream().filter(line -> line.contains(containing)).toList();
    }
}
