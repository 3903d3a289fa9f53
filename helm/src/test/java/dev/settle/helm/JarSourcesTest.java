package dev.settle.helm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Handler JARs from the image, from an http(s) URL with a checksum, and from Pulsar package management. */
class JarSourcesTest {
    private static final String HANDLERS = "/opt/settle/handlers";

    @TempDir
    Path scratch;

    @Test
    void jarFromTheImageNeedsNoInitContainerAndNoDownloadVolume() {
        Rendered rendered = SettleChart.render(SettleChart.scenario("jar-from-image"));

        assertThat(rendered.initContainers()).isEmpty();
        assertThat(rendered.volume("handlers")).isEmpty();
        assertThat(subscription(rendered, 0)).containsEntry("jar", "/opt/settle/lib/orders-handler.jar");
        assertThat(rendered.runtimeContainer())
                .containsEntry(
                        "image",
                        "registry.example.com/acme/settle-orders:1.4.0"
                                + "@sha256:4f6c2a2d2d0b6c9e1e0f3a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d");
    }

    @Test
    void jarFromAUrlIsDownloadedOntoAnEmptyDirAndCheckedAgainstItsSha256() {
        Rendered rendered = SettleChart.render(SettleChart.scenario("jar-from-url"));

        assertThat(rendered.initContainers()).hasSize(1);
        Map<String, Object> fetch = rendered.initContainers().get(0);
        assertThat(fetch).containsEntry("name", "fetch-invoices").containsEntry("image", "curlimages/curl:8.11.1");
        Map<String, Object> env = Rendered.env(fetch);
        assertThat(env)
                .containsEntry("JAR_URL", "https://artifacts.example.com/releases/invoice-handler-2.1.0.jar")
                .containsEntry("JAR_SHA256", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
                .containsEntry("JAR_FILE", HANDLERS + "/invoices.jar")
                .containsEntry(
                        "AUTHORIZATION", Map.of("secretKeyRef", Map.of("name", "artifacts-auth", "key", "header")));
        List<Object> command = Yamls.list(fetch.get("command"), "command");
        assertThat(command.subList(0, 2)).containsExactly("/bin/sh", "-ec");
        assertThat((String) command.get(2))
                .as("the script refuses a download whose checksum differs, and only then moves it into place")
                .contains("sha256sum -c -")
                .contains("mv \"$part\" \"$JAR_FILE\"");

        assertThat(Rendered.mount(fetch, "handlers"))
                .containsEntry("mountPath", HANDLERS)
                .doesNotContainKey("readOnly");
        assertThat(Rendered.mount(rendered.runtimeContainer(), "handlers"))
                .containsEntry("mountPath", HANDLERS)
                .containsEntry("readOnly", true);
        assertThat(rendered.volume("handlers").orElseThrow()).containsKey("emptyDir");
        assertThat(subscription(rendered, 0)).containsEntry("jar", HANDLERS + "/invoices.jar");
    }

    @Test
    void jarFromAPulsarPackageIsDownloadedByPulsarAdminWithTheTokenFromASecret() {
        Rendered rendered = SettleChart.render(SettleChart.scenario("jar-from-package"));

        assertThat(rendered.initContainers()).hasSize(1);
        Map<String, Object> download = rendered.initContainers().get(0);
        assertThat(download)
                .containsEntry("name", "package-shipments")
                .containsEntry("image", "apachepulsar/pulsar:" + System.getProperty("settle.pulsar.version"))
                .containsEntry("command", List.of("/pulsar/bin/pulsar-admin"));
        List<Object> args = Yamls.list(download.get("args"), "args");
        assertThat(args)
                .containsSequence("--admin-url", "http://pulsar-broker.pulsar.svc.cluster.local:8080")
                .containsSequence("--auth-plugin", "org.apache.pulsar.client.impl.auth.AuthenticationToken")
                .containsSequence("--auth-params", "token:$(PULSAR_TOKEN)")
                .containsSequence(
                        "packages",
                        "download",
                        "function://acme/logistics/shipment-handler@3.0.2",
                        "--path",
                        HANDLERS + "/shipments.jar");
        assertThat(Rendered.env(download))
                .as("Kubernetes expands $(PULSAR_TOKEN) in args from this secretKeyRef")
                .containsEntry("PULSAR_TOKEN", Map.of("secretKeyRef", Map.of("name", "pulsar-token", "key", "token")));
        assertThat(Rendered.mount(download, "handlers")).containsEntry("mountPath", HANDLERS);
        assertThat(rendered.volume("handlers").orElseThrow()).containsKey("emptyDir");
        assertThat(subscription(rendered, 0)).containsEntry("jar", HANDLERS + "/shipments.jar");
    }

    @Test
    void oneReleaseMixesAllThreeSourcesWithOneInitContainerPerDownload() {
        Rendered rendered = SettleChart.render(scratch, """
                manifest:
                  subscriptions:
                    - {name: a, topics: [persistent://t/n/a], jar: /opt/settle/lib/a.jar}
                    - {name: b, topics: [persistent://t/n/b], jar: /opt/settle/handlers/b.jar}
                    - {name: c, topics: [persistent://t/n/c], jar: /opt/settle/handlers/c.jar}
                    - {name: d, topics: [persistent://t/n/d], jar: /opt/settle/lib/more/d.jar}
                jars:
                  - {name: a, path: /opt/settle/lib/a.jar}
                  - name: b
                    url: https://artifacts.example.com/b.jar
                    sha256: 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08
                  - {name: c, package: function://t/n/c@1}
                  - {name: d, path: /opt/settle/lib/more}
                """);

        assertThat(rendered.initContainers())
                .extracting(container -> container.get("name"))
                .containsExactly("fetch-b", "package-c");
        assertThat(Rendered.env(rendered.initContainers().get(0)))
                .as("sha256sum prints lower case; the checksum is compared in lower case")
                .containsEntry("JAR_SHA256", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
    }

    private static Map<String, Object> subscription(Rendered rendered, int index) {
        return Yamls.map(
                Yamls.list(rendered.manifest().get("subscriptions"), "subscriptions")
                        .get(index),
                "subscriptions[" + index + "]");
    }
}
