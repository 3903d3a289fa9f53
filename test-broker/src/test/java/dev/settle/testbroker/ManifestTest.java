package dev.settle.testbroker;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManifestTest {
    @Test
    void aManifestNamesTheBrokerAndAFreeLocalPortThenEachSubscriptionWithItsKeysInOrder() {
        String yaml = new Manifest("pulsar://127.0.0.1:6650")
                .section("admin:\n  port: 0")
                .subscription("orders", "persistent://public/default/a", "persistent://public/default/b")
                .type("Key_Shared")
                .jar("orders.jar")
                .set("concurrency", 4)
                .deadLetter(3, "orders-dlq")
                .yaml("output:\n  topic: out\n")
                .config("out", "/tmp/out.txt")
                .subscription("audit", "audit")
                .set("failureBackoff", "none")
                .text();

        assertThat(yaml).isEqualTo("""
                pulsar:
                  serviceUrl: pulsar://127.0.0.1:6650
                http:
                  port: 0
                  bindAddress: 127.0.0.1
                admin:
                  port: 0
                subscriptions:
                  - name: orders
                    topics: [persistent://public/default/a, persistent://public/default/b]
                    type: Key_Shared
                    jar: orders.jar
                    concurrency: 4
                    maxAttempts: 3
                    deadLetterTopic: orders-dlq
                    output:
                      topic: out
                    config:
                      out: /tmp/out.txt
                  - name: audit
                    topics: [audit]
                    failureBackoff: none
                """);
    }

    @Test
    void anotherBrokerAndPortReplaceTheFixturesAndTheFileHoldsTheText(@TempDir Path folder) throws Exception {
        Manifest manifest = new Manifest("pulsar://127.0.0.1:6650")
                .serviceUrl("pulsar://127.0.0.1:1")
                .httpPort(8081);

        Path file = manifest.writeTo(folder.resolve("settle.yaml"));

        assertThat(Files.readString(file))
                .isEqualTo(manifest.text())
                .startsWith("pulsar:\n  serviceUrl: pulsar://127.0.0.1:1\nhttp:\n  port: 8081\n")
                .doesNotContain("subscriptions:");
    }

    @Test
    void anAdminUrlIsWrittenUnderPulsarAfterTheServiceUrl() {
        assertThat(new Manifest("pulsar://127.0.0.1:6650")
                        .adminUrl("http://127.0.0.1:8080")
                        .text())
                .startsWith(
                        "pulsar:\n  serviceUrl: pulsar://127.0.0.1:6650\n  adminUrl: http://127.0.0.1:8080\nhttp:\n");
    }

    @Test
    void theOlderTextFormIsTheBuildersHeadFollowedByTheRest() {
        assertThat(PulsarFixture.manifestText("pulsar://h:1", 0, "subscriptions: []\n"))
                .isEqualTo(new Manifest("pulsar://h:1").text() + "subscriptions: []\n");
    }

    @Test
    void namesAreUniqueInTheJvmAndKeepTheirReadablePart() {
        String first = PulsarFixture.unique("orders");
        String second = PulsarFixture.unique("orders");

        assertThat(first).startsWith("orders-").isNotEqualTo(second);
    }
}
