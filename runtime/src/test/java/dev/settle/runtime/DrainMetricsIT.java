package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.TestJar;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.Waits;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 48: the drain-time gauges from a real broker's subscription stats. A handler that holds every message
 * (retryAfter one hour, no ack timeout) leaves a backlog that is never settled: its oldest message's age grows from
 * the broker's earliestMsgPublishTimeInBacklog, and its drain time is +Inf.
 */
class DrainMetricsIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @TempDir
    Path folder;

    @Test
    void aBacklogThatIsHeldShowsItsOldestMessagesAgeAndNeverDrains() throws Exception {
        Path jar = TestJar.at(folder.resolve("hold.jar"))
                .source("test.Hold", """
                        package test;
                        import dev.settle.sdk.*;
                        import java.time.Duration;
                        public class Hold implements Handler<String> {
                            @Override public Outcome handle(Delivery<String> delivery) {
                                return Outcome.retryAfter(Duration.ofHours(1));
                            }
                        }
                        """)
                .services("test.Hold")
                .build();
        String topic = "persistent://public/default/drain-" + System.nanoTime();
        pulsar.backlog(topic, "held", 20, i -> "m" + i);
        Path file = Files.writeString(folder.resolve("drain.yaml"), """
                pulsar:
                  serviceUrl: %s
                  adminUrl: %s
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                subscriptions:
                  - name: held
                    topics: [%s]
                    jar: %s
                """.formatted(
                        pulsar.endpoints().serviceUrl(), pulsar.endpoints().adminUrl(), topic, jar));
        Settle settle = InThisJvm.start(pulsar, file);

        // The poller reads the broker every 15 s; generous for a loaded machine. A scrape collects one gauge after the
        // other, so the poller's first reading can land between them: one scrape of a full build showed the age and
        // not yet the drain time. Both are waited for in the same scrape, then the drain time's value is checked.
        String metrics = Waits.until(
                "the drain-time gauges read the held backlog",
                Duration.ofSeconds(90),
                () -> scrape(settle),
                text -> value(text, "settle_oldest_unsettled_age_seconds")
                                .filter(age -> age > 0)
                                .isPresent()
                        && value(text, "settle_backlog_drain_seconds").isPresent());
        assertThat(value(metrics, "settle_backlog_drain_seconds")).contains(Double.POSITIVE_INFINITY);
        assertThat(pulsar.backlog(topic, "held")).isEqualTo(20);
    }

    private static String scrape(Settle settle) throws Exception {
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + settle.httpPort() + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    private static Optional<Double> value(String metrics, String name) {
        return metrics.lines()
                .filter(line -> line.startsWith(name + "{subscription=\"held\"}"))
                .map(line -> line.substring(line.lastIndexOf(' ') + 1))
                .map(text -> text.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(text))
                .findFirst();
    }
}
