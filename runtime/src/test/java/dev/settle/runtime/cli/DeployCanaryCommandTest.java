package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code settle deploy --canary}, {@code --promote}, {@code --abort}: the requests they make, and their refusals. */
class DeployCanaryCommandTest {
    private final SettleCommand settle = new SettleCommand();
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private HttpServer admin;

    @BeforeEach
    void serve() throws Exception {
        admin = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        admin.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            requests.add(
                    exchange.getRequestMethod() + " " + exchange.getRequestURI().getRawPath()
                            + (exchange.getRequestURI().getRawQuery() == null
                                    ? ""
                                    : "?" + exchange.getRequestURI().getRawQuery()));
            byte[] body = """
                    {"subscription": "orders", "generation": 4, "sha256": "ab", "handler": "com.acme.Handler",
                     "previousSha256": "cd", "swapMillis": 0}
                    """.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        admin.start();
    }

    @AfterEach
    void stop() {
        admin.stop(0);
    }

    private int deploy(Path folder, String... options) throws Exception {
        Path token = Files.writeString(folder.resolve("token"), "a-token");
        List<String> args = new java.util.ArrayList<>(List.of(options));
        args.addAll(List.of(
                "--subscription",
                "orders",
                "--admin",
                "http://127.0.0.1:" + admin.getAddress().getPort(),
                "--token-file",
                token.toString()));
        args.add(0, "deploy");
        return settle.run(args.toArray(String[]::new));
    }

    @Test
    void aCanaryPostsTheJarWithItsStepsAndStepTime(@TempDir Path folder) throws Exception {
        Path jar = Files.write(folder.resolve("handler.jar"), new byte[] {1, 2, 3});

        assertThat(deploy(folder, jar.toString(), "--canary", "5%", "--steps", "5,25,100", "--step-every", "60s"))
                .as(settle.err())
                .isZero();

        assertThat(requests).containsExactly("POST /v1/subscriptions/orders/canary?steps=5%2C25%2C100&stepEvery=60s");
        assertThat(settle.out()).contains("subscription 'orders': canary generation 4, sha256 ab, on 5% of keys");
    }

    @Test
    void withoutStepsACanaryRampsToTwentyFiveThenAll(@TempDir Path folder) throws Exception {
        Path jar = Files.write(folder.resolve("handler.jar"), new byte[] {1});
        assertThat(deploy(folder, jar.toString(), "--canary", "10"))
                .as(settle.err())
                .isZero();
        assertThat(requests).containsExactly("POST /v1/subscriptions/orders/canary?steps=10%2C25%2C100");
    }

    @Test
    void promoteAndAbortPostToTheRunningRamp(@TempDir Path folder) throws Exception {
        assertThat(deploy(folder, "--promote")).as(settle.err()).isZero();
        assertThat(settle.out()).contains("subscription 'orders': canary promoted; generation 4");
        assertThat(deploy(folder, "--abort")).as(settle.err()).isZero();
        assertThat(settle.out()).contains("subscription 'orders': canary aborted; generation 4");
        assertThat(requests)
                .containsExactly(
                        "POST /v1/subscriptions/orders/canary/promote", "POST /v1/subscriptions/orders/canary/abort");
    }

    @Test
    void aCanaryOutsideOneToNinetyNineOrStepsNotStartingThereAreRefusedBeforeAnyRequest(@TempDir Path folder)
            throws Exception {
        Path jar = Files.write(folder.resolve("handler.jar"), new byte[] {1});
        assertThat(deploy(folder, jar.toString(), "--canary", "100%")).isEqualTo(2);
        assertThat(settle.err()).contains("--canary must be a percent from 1 to 99, such as 5%, was '100%'");
        assertThat(deploy(folder, jar.toString(), "--canary", "5", "--steps", "25,100"))
                .isEqualTo(2);
        assertThat(settle.err()).contains("--steps must start at --canary (5), was '25,100'");
        assertThat(deploy(folder, "--promote", "--abort")).isEqualTo(2);
        assertThat(requests).isEmpty();
    }
}
