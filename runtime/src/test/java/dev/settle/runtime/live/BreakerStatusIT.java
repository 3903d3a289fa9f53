package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.Settle;
import dev.settle.runtime.isolation.TestJar;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pulsar.client.api.Producer;
import org.junit.jupiter.api.Test;

/**
 * The outage circuit breaker's state and reason in the admin API's subscription and in {@code settle status}, on a
 * real broker (docs/concepts.md, "An outage is not a poison message"): open while the handler's dependency (a file the
 * test creates) is down, closed once it is back.
 */
class BreakerStatusIT extends LiveCodeHarness {
    @Test
    void theAdminApiAndSettleStatusReportTheOpenBreakerWithItsReasonThenClosed() throws Exception {
        Path down = folder.resolve("dependency-down");
        TestJar.at(folder.resolve("manifest.jar"))
                .source("test.Dependent", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.nio.file.*;
                        public class Dependent implements Handler<String> {
                            @Override public Outcome handle(Delivery<String> delivery) throws Exception {
                                if (Files.exists(Path.of("%s"))) {
                                    throw new java.net.ConnectException("the dependency is down");
                                }
                                return Outcome.ack();
                            }
                        }
                        """.formatted(down))
                .services("test.Dependent")
                .build();
        String topic = topic("breaker-status");
        Settle settle = start(manifest(topic, "", 1));
        String admin = "http://127.0.0.1:" + settle.adminPort().orElseThrow();
        Path token = folder.resolve("token.txt");

        Files.createFile(down);
        try (Producer<String> producer = producer(topic)) {
            for (int n = 0; n < 10; n++) {
                producer.newMessage().key("k" + n).value("m" + n).send();
            }
        }
        // Kept as read when open: the next read may meet a probe (half-open).
        AtomicReference<String> open = new AtomicReference<>("");
        await(
                () -> {
                    open.set(status(settle));
                    return open.get().contains("\"state\":\"open\"");
                },
                Duration.ofSeconds(30),
                open::get);
        String printed =
                Cli.out("status", "--admin", admin, "--token-file", token.toString(), "--subscription", "live");

        Files.delete(down);
        await(() -> status(settle).contains("\"state\":\"closed\""), Duration.ofSeconds(30), () -> status(settle));

        assertThat(open.get())
                .contains("\"breaker\":{\"state\":\"open\",\"reason\":\"")
                .contains("java.net.ConnectException");
        assertThat(printed)
                .containsPattern("breaker: (open|half-open) \\(")
                .contains("messages held, receiving paused");
        assertThat(Cli.out("status", "--admin", admin, "--token-file", token.toString(), "--subscription", "live"))
                .contains("breaker: closed");
    }

    /**
     * A Pulsar Function's subscription keeps no generations, but its outage circuit breaker is shown the same way: in
     * the admin API's list and by name, and by {@code settle status}.
     */
    @Test
    void aFunctionsOpenBreakerIsInTheAdminApiAndSettleStatusToo() throws Exception {
        Path down = folder.resolve("dependency-down");
        TestJar.at(folder.resolve("function.jar"))
                .source("test.DependentFunction", """
                        package test;
                        import java.nio.file.*;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class DependentFunction implements Function<String, Void> {
                            @Override public Void process(String input, Context context) throws Exception {
                                if (Files.exists(Path.of("%s"))) {
                                    throw new java.net.ConnectException("the dependency is down");
                                }
                                return null;
                            }
                        }
                        """.formatted(down))
                .build();
        String topic = topic("breaker-status-function");
        Path manifest = liveManifest("")
                .subscription("fn", topic)
                .set("function", "test.DependentFunction")
                .jar("function.jar")
                .writeTo(folder.resolve("settle.yaml"));
        Settle settle = start(manifest);
        String admin = "http://127.0.0.1:" + settle.adminPort().orElseThrow();
        Path token = folder.resolve("token.txt");

        Files.createFile(down);
        try (Producer<String> producer = producer(topic)) {
            for (int n = 0; n < 10; n++) {
                producer.newMessage().key("k" + n).value("m" + n).send();
            }
        }
        AtomicReference<String> open = new AtomicReference<>("");
        await(
                () -> {
                    open.set(status(settle, "fn"));
                    return open.get().contains("\"state\":\"open\"");
                },
                Duration.ofSeconds(30),
                open::get);
        String list = list(settle);
        String printed = Cli.out("status", "--admin", admin, "--token-file", token.toString(), "--subscription", "fn");
        String printedAll = Cli.out("status", "--admin", admin, "--token-file", token.toString());

        Files.delete(down);
        await(
                () -> status(settle, "fn").contains("\"state\":\"closed\""),
                Duration.ofSeconds(30),
                () -> status(settle, "fn"));

        assertThat(open.get())
                .contains("\"subscription\":\"fn\"")
                .contains("\"function\":\"test.DependentFunction\"")
                .contains("\"breaker\":{\"state\":\"open\",\"reason\":\"")
                .contains("java.net.ConnectException");
        assertThat(list).contains("\"subscription\":\"fn\"").contains("\"breaker\":{");
        assertThat(printed)
                .contains("subscription 'fn': Pulsar Function test.DependentFunction")
                .containsPattern("breaker: (open|half-open) \\(")
                .contains("messages held, receiving paused");
        assertThat(printedAll).contains("subscription 'fn': Pulsar Function").contains("breaker: ");
        assertThat(Cli.out("status", "--admin", admin, "--token-file", token.toString(), "--subscription", "fn"))
                .contains("breaker: closed");
    }

    private String status(Settle settle) {
        return status(settle, "live");
    }

    private String list(Settle settle) throws Exception {
        return request(settle, "GET", "/v1/subscriptions", null, TOKEN).body();
    }

    private String status(Settle settle, String subscription) {
        try {
            return request(settle, "GET", "/v1/subscriptions/" + subscription, null, TOKEN)
                    .body();
        } catch (Exception e) {
            return e.toString();
        }
    }
}
