package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code settle status} prints what code-store records and runtimes' reports say, and anyone who may write those
 * topics wrote them: every field escaped, and a malformed part said and skipped while the rest is shown (issue 40).
 */
class StatusCommandTest {
    private final SettleCommand settle = new SettleCommand();
    private HttpServer admin;
    private String answer;

    @BeforeEach
    void serve() throws Exception {
        admin = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        admin.createContext("/", exchange -> {
            byte[] body = answer.getBytes(StandardCharsets.UTF_8);
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

    private int status(Path folder) throws Exception {
        Path token = Files.writeString(folder.resolve("token"), "a-token");
        return settle.run(
                "status",
                "--admin",
                "http://127.0.0.1:" + admin.getAddress().getPort(),
                "--token-file",
                token.toString());
    }

    @Test
    void anOpenBreakerIsShownWithWhyAndTheMessagesItHolds(@TempDir Path folder) throws Exception {
        answer = """
                {"subscriptions": [
                  {"subscription": "orders", "generation": 3, "sha256": "ab", "handler": "com.acme.Handler",
                   "source": "upload", "activeSince": "2026-01-01T00:00:00Z", "desired": 3, "kept": [],
                   "breaker": {"state": "open", "reason": "5 keys failed with a dependency's cause within 2s",
                               "held": 12}},
                  {"subscription": "payments", "generation": 1, "sha256": "cd", "handler": "com.acme.Handler",
                   "source": "upload", "activeSince": "2026-01-01T00:00:00Z", "desired": 1, "kept": [],
                   "breaker": {"state": "closed", "reason": "no outage seen", "held": 0}}
                ]}
                """;

        assertThat(status(folder)).as(settle.err()).isZero();

        assertThat(settle.out())
                .contains("  breaker: open (5 keys failed with a dependency's cause within 2s), 12 messages held,"
                        + " receiving paused")
                .contains("  breaker: closed\n");
    }

    @Test
    void aFunctionsSubscriptionShowsItsClassAndBreakerWithoutGenerations(@TempDir Path folder) throws Exception {
        answer = """
                {"subscriptions": [
                  {"subscription": "enrich", "function": "com.acme.Enrich",
                   "breaker": {"state": "half-open", "reason": "5 keys failed with a dependency's cause within 2s",
                               "held": 7}}
                ]}
                """;

        assertThat(status(folder)).as(settle.err()).isZero();

        assertThat(settle.out())
                .isEqualTo("subscription 'enrich': Pulsar Function com.acme.Enrich (its code is the manifest's: no"
                        + " generations)\n  breaker: half-open (5 keys failed with a dependency's cause within 2s), 7"
                        + " messages held, receiving paused\n");
    }

    @Test
    void aRunningCanaryShowsBothGenerationsSlicesAndRatesSideBySide(@TempDir Path folder) throws Exception {
        answer = """
                {"subscriptions": [
                  {"subscription": "orders", "generation": 3, "sha256": "ab", "handler": "com.acme.Handler",
                   "source": "upload", "activeSince": "2026-01-01T00:00:00Z", "desired": 3, "kept": [],
                   "canary": {"generation": 4, "percent": 25, "steps": [5, 25, 100], "stepEverySeconds": 60,
                              "stepStartedAt": "2026-01-01T00:01:00Z", "status": "running",
                              "verdict": "healthy", "judged": "no regression over 240 canary and 720 current calls",
                              "currentGeneration": 3,
                              "canaryCalls": {"calls": 240, "failureRate": 0.0125, "retryRate": 0.0,
                                              "retryAfterRate": 0.0, "noneRate": 0.0, "dropRate": 0.0,
                                              "p99Millis": 12.5},
                              "currentCalls": {"calls": 720, "failureRate": 0.01, "retryRate": 0.02,
                                               "retryAfterRate": 0.0, "noneRate": 0.0, "dropRate": 0.0,
                                               "p99Millis": 11.0}}},
                  {"subscription": "payments", "generation": 1, "sha256": "cd", "handler": "com.acme.Handler",
                   "source": "upload", "activeSince": "2026-01-01T00:00:00Z", "desired": 1, "kept": [],
                   "canary": {"generation": 2, "percent": 0, "steps": [5, 25, 100], "stepEverySeconds": 60,
                              "stepStartedAt": "2026-01-01T00:02:00Z", "status": "rolled_back",
                              "reason": "rolled back by itself at 5%: failure rate 30.0% against 0.0%"}}
                ]}
                """;

        assertThat(status(folder)).as(settle.err()).isZero();

        assertThat(settle.out())
                .contains("  canary: generation 4 on 25% of keys, steps [5, 25, 100], every 60 s, this step since"
                        + " 2026-01-01T00:01:00Z\n"
                        + "    no regression over 240 canary and 720 current calls\n")
                .containsPattern("canary 4 +25% +240 +1\\.3% +0\\.0% +0\\.0% +0\\.0% +0\\.0% +12\\.5 ms")
                .containsPattern("current 3 +75% +720 +1\\.0% +2\\.0% +0\\.0% +0\\.0% +0\\.0% +11\\.0 ms")
                .contains("  canary: generation 2 rolled back: rolled back by itself at 5%: failure rate 30.0% against"
                        + " 0.0% (2026-01-01T00:02:00Z)");
    }

    @Test
    void aMalformedFleetReportIsSaidAndTheRestIsShownEscaped(@TempDir Path folder) throws Exception {
        answer = """
                {"subscriptions": [
                  {"subscription": "orders\\u001b[2J", "generation": 3, "sha256": "\\u001b]0;pwned\\u0007",
                   "handler": "com.acme.Handler", "source": "upload", "activeSince": "2026-01-01T00:00:00Z",
                   "desired": 3,
                   "fleet": [
                     "not an object",
                     {"instance": "pod-1", "malformed": "generation must be a generation number, was 'x'"},
                     {"instance": "pod-2\\r\\nALL OK", "generation": 3, "sha256": "ab", "at": "2026-01-01T00:00:01Z"}
                   ],
                   "kept": [7, {"generation": 3, "sha256": "ab", "handler": "com.acme.Handler", "source": "upload",
                                "activatedAt": "2026-01-01T00:00:00Z"}]},
                  "oops"
                ]}
                """;

        assertThat(status(folder)).as(settle.err()).isZero();

        assertThat(settle.out())
                .contains("subscription 'orders\\u001b[2J': generation 3, sha256 \\u001b]0;pwned\\u0007")
                .contains("  fleet: 1 of 3 on generation 3 (desired)")
                .contains("  a runtime's report is malformed (not a JSON object): not an object")
                .contains("  runtime pod-1: its report is malformed (generation must be a generation number, was"
                        + " 'x'); not counted")
                .contains("  runtime pod-2\\r\\nALL OK: generation 3, sha256 ab")
                .contains("  a kept generation is malformed (not a JSON object): 7")
                .contains("  kept: generation 3, sha256 ab, com.acme.Handler")
                .contains("a subscription's status is malformed (not a JSON object): oops")
                .doesNotContain("\u001b", "\u0007", "\r");
    }
}
