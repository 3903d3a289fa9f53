package dev.settle.helm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Values that cannot work are refused at render time, each with a message that says what to change. */
class InvalidValuesTest {
    private static final String ORDERS_SUBSCRIPTION = """
            manifest:
              subscriptions:
                - name: orders
                  topics: [persistent://public/default/orders]
                  jar: /opt/settle/handlers/orders.jar
            """;

    @TempDir
    Path scratch;

    private String refusal(String values) {
        return SettleChart.refusal(scratch, values);
    }

    @Test
    void kedaAndHorizontalPodAutoscalerTogetherAreRefused() {
        assertThat(refusal("""
                keda: {enabled: true}
                autoscaling: {enabled: true}
                """))
                .contains("keda.enabled and autoscaling.enabled are both true: KEDA creates its own"
                        + " HorizontalPodAutoscaler and the two would fight over the replica count. Set"
                        + " autoscaling.enabled=false to scale on the subscription backlog, or keda.enabled=false to scale on"
                        + " CPU.");
    }

    @Test
    void theAdminApiWithMoreThanOnePodIsRefusedWhenTheCodeIsKeptOnDisk() {
        String admin = """
                manifest:
                  pulsar: {serviceUrl: pulsar://pulsar:6650}
                  admin:
                    token: {file: /var/run/secrets/settle/admin-token}
                    dataDir: /var/lib/settle
                  subscriptions:
                    - name: orders
                      topics: [persistent://public/default/orders]
                      jar: /opt/settle/examples/settle-examples.jar
                """;
        String refused = "manifest.admin turns on the admin API, which takes handler JARs, but more than one pod may"
                + " run (replicaCount above 1, autoscaling or keda), and the code is kept on each pod's disk"
                + " (manifest.admin.codeStore: disk, the default): an upload would reach one pod only, so the pods"
                + " would run different code. Keep the code in Pulsar, where every pod reads it"
                + " (manifest.admin.codeStore: pulsar with codeNamespace, and manifest.pulsar.adminUrl), or keep one"
                + " pod: replicaCount: 1 with autoscaling and keda off.";
        assertThat(refusal(admin + "replicaCount: 2\n")).contains(refused);
        assertThat(refusal(admin + "autoscaling: {enabled: true}\n")).contains(refused);
        assertThat(refusal(admin + "keda: {enabled: true}\n")).contains(refused);
        // One pod: rendered.
        SettleChart.render(scratch, admin + "replicaCount: 1\n");
    }

    @Test
    void imageDigestThatIsNotASha256IsRefused() {
        assertThat(refusal("""
                image:
                  digest: latest
                """)).contains("digest").contains("sha256:[a-f0-9]{64}");
    }

    @Test
    void urlSourceWithoutChecksumIsRefused() {
        assertThat(refusal(ORDERS_SUBSCRIPTION + """
                jars:
                  - name: orders
                    url: https://artifacts.example.com/orders.jar
                """))
                .contains("jars[0] (orders) downloads https://artifacts.example.com/orders.jar without a"
                        + " checksum: set jars[0].sha256 to the JAR's SHA-256 (64 hex digits, as printed by sha256sum), so a"
                        + " changed or corrupted download is refused.");
    }

    @Test
    void malformedChecksumIsRefused() {
        assertThat(refusal(ORDERS_SUBSCRIPTION + """
                jars:
                  - name: orders
                    url: https://artifacts.example.com/orders.jar
                    sha256: d41d8cd98f00b204e9800998ecf8427e
                """))
                .contains("jars[0] (orders) sha256 is 'd41d8cd98f00b204e9800998ecf8427e': it must be 64 hex"
                        + " digits, as printed by sha256sum.");
    }

    @Test
    void urlThatIsNotHttpIsRefused() {
        assertThat(refusal(ORDERS_SUBSCRIPTION + """
                jars:
                  - name: orders
                    url: ftp://artifacts.example.com/orders.jar
                    sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
                """))
                .contains("jars[0] (orders) url is 'ftp://artifacts.example.com/orders.jar': only http:// and"
                        + " https:// URLs are downloaded. Use one of those, or a package source for Pulsar package"
                        + " management.");
    }

    @Test
    void noJarSourceAtAllIsRefused() {
        assertThat(refusal("jars: []\n"))
                .contains("jars is empty: the runtime needs at least one handler JAR. Add"
                        + " an entry with a name and one of path (a JAR in the image), url with sha256 (a download), or"
                        + " package (function://tenant/namespace/name@version).");
    }

    @Test
    void jarEntryWithoutSourceIsRefused() {
        assertThat(refusal(ORDERS_SUBSCRIPTION + """
                jars:
                  - name: orders
                """))
                .contains("jars[0] (orders) has no source: set exactly one of path (a JAR in the image), url"
                        + " (with sha256) or package (function://tenant/namespace/name@version).");
    }

    @Test
    void jarEntryWithTwoSourcesIsRefused() {
        assertThat(refusal(ORDERS_SUBSCRIPTION + """
                jars:
                  - name: orders
                    url: https://artifacts.example.com/orders.jar
                    sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
                    package: function://public/default/orders@1.0
                """))
                .contains("jars[0] (orders) sets url and package: a JAR comes from exactly one source. Keep"
                        + " one of them, or split them into separate entries with their own names.");
    }

    @Test
    void twoJarsWithTheSameNameAreRefused() {
        assertThat(refusal(ORDERS_SUBSCRIPTION + """
                jars:
                  - {name: orders, package: function://public/default/orders@1.0}
                  - {name: orders, package: function://public/default/orders@2.0}
                """))
                .contains("jars[1]: the name 'orders' is used twice; names must be unique, since a download"
                        + " lands in /opt/settle/handlers/<name>.jar. Rename one of them.");
    }

    @Test
    void checksumOnASourceThatIsNotDownloadedIsRefused() {
        assertThat(refusal("""
                jars:
                  - name: examples
                    path: /opt/settle/examples/settle-examples.jar
                    sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
                """))
                .contains("jars[0] (examples) sets sha256, which is checked only for url sources: remove"
                        + " jars[0].sha256.");
    }

    @Test
    void packageWithoutVersionIsRefused() {
        assertThat(refusal(ORDERS_SUBSCRIPTION + """
                jars:
                  - {name: orders, package: function://public/default/orders}
                """))
                .contains("jars[0] (orders) package is 'function://public/default/orders': it must look like"
                        + " function://tenant/namespace/name@version (the version is required, so every pod runs the same"
                        + " JAR).");
    }

    @Test
    void relativeImagePathIsRefused() {
        assertThat(refusal("""
                jars:
                  - {name: examples, path: examples/settle-examples.jar}
                """))
                .contains("jars[0] (examples) path is 'examples/settle-examples.jar': it must be absolute (the"
                        + " manifest lives in a ConfigMap at /etc/settle/manifest.yaml, so a relative path points there)."
                        + " Write the JAR's full path in the image.");
    }

    @Test
    void subscriptionWhoseJarNoSourceProvidesIsRefused() {
        assertThat(refusal(ORDERS_SUBSCRIPTION))
                .contains("manifest.subscriptions[0] (orders) jar is"
                        + " '/opt/settle/handlers/orders.jar', which no entry of jars provides: point it at one of"
                        + " /opt/settle/examples/settle-examples.jar, or add a jars entry (path, url with sha256, or package)"
                        + " for it.");
    }

    @Test
    void gracePeriodShorterThanTheDrainPlusTenSecondsIsRefused() {
        assertThat(refusal("terminationGracePeriodSeconds: 25\n"))
                .contains("terminationGracePeriodSeconds is 25:"
                        + " it must be at least the runtime's 20 s drain grace (manifest.shutdown.grace) plus 10 s for the"
                        + " handlers' close and the acknowledgements' flush, or Kubernetes kills the pod mid-drain. Set it to"
                        + " 30 or more, or leave it out to have it derived.");
        assertThat(refusal("""
                terminationGracePeriodSeconds: 40
                manifest:
                  shutdown:
                    grace: 45s
                """))
                .contains("terminationGracePeriodSeconds is 40:")
                .contains("Set it to 55 or more");
    }

    @Test
    void aShutdownGraceTheChartCannotReadIsRefused() {
        assertThat(refusal("""
                manifest:
                  shutdown:
                    grace: PT30S
                """))
                .contains("manifest.shutdown.grace is 'PT30S': write it as a number with ms, s, m or h");
    }

    @Test
    void exclusiveSubscriptionOnSeveralReplicasIsRefused() {
        assertThat(refusal("""
                replicaCount: 3
                manifest:
                  subscriptions:
                    - name: audit
                      topics: [persistent://public/default/audit]
                      type: Exclusive
                      jar: /opt/settle/examples/settle-examples.jar
                """))
                .contains("manifest.subscriptions[0] (audit) is Exclusive, which admits one consumer, but up"
                        + " to 3 replicas would run: the others could not subscribe. Use Failover (the others stand by),"
                        + " Shared or Key_Shared, or run one replica.");
    }

    @Test
    void kedaOnAFailoverSubscriptionIsRefused() {
        assertThat(refusal("""
                keda: {enabled: true}
                manifest:
                  subscriptions:
                    - name: audit
                      topics: [persistent://public/default/audit]
                      type: Failover
                      jar: /opt/settle/examples/settle-examples.jar
                """))
                .contains("keda.enabled scales on the backlog of manifest.subscriptions[0] (audit), which is"
                        + " Failover: only one consumer receives on Exclusive and Failover, so added replicas would sit idle."
                        + " Use Shared or Key_Shared, or set keda.enabled=false.");
    }

    @Test
    void bothPrometheusOperatorMonitorsAreRefused() {
        assertThat(refusal("""
                metrics:
                  podMonitor: {enabled: true}
                  serviceMonitor: {enabled: true}
                """))
                .contains("metrics.podMonitor.enabled and metrics.serviceMonitor.enabled are both true:"
                        + " Prometheus would scrape every pod twice and double every series. Enable only one of them.");
    }

    @Test
    void disruptionBudgetWithBothBoundsIsRefused() {
        assertThat(refusal("""
                podDisruptionBudget: {enabled: true, minAvailable: 1, maxUnavailable: 1}
                """))
                .contains("podDisruptionBudget sets both minAvailable and maxUnavailable: Kubernetes accepts"
                        + " only one. Set the other to null.");
    }

    @Test
    void tokenWrittenIntoTheManifestIsRefused() {
        assertThat(refusal("""
                manifest:
                  pulsar:
                    authentication:
                      token: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzZXR0bGUifQ.c2lnbmF0dXJl
                """))
                .contains("manifest.pulsar.authentication.token holds the token itself, and the manifest goes"
                        + " into a ConfigMap: put the token in a Kubernetes Secret, add it to secretEnv (e.g. PULSAR_TOKEN:"
                        + " {secretName: pulsar-token, key: token}) and write token: {env: PULSAR_TOKEN}.")
                .doesNotContain("eyJhbGciOiJIUzI1NiJ9");
    }

    @Test
    void tokenVariableThatThePodDoesNotSetIsRefused() {
        assertThat(refusal("""
                manifest:
                  pulsar:
                    authentication:
                      token: {env: PULSAR_TOKEN}
                """))
                .contains("manifest.pulsar.authentication.token.env is PULSAR_TOKEN, but the pod's environment"
                        + " does not set it: add secretEnv.PULSAR_TOKEN: {secretName: <your Secret>, key: <its key>}.");
    }

    @Test
    void oauth2CredentialsInlinedAsADataUrlAreRefused() {
        assertThat(refusal("""
                manifest:
                  pulsar:
                    authentication:
                      oauth2:
                        issuerUrl: https://auth.example.com/
                        credentialsUrl: "data:application/json;base64,eyJjbGllbnRfc2VjcmV0IjoicyJ9"
                """))
                .contains("manifest.pulsar.authentication.oauth2.credentialsUrl is a data: URL, which holds the"
                        + " client secret, and the manifest goes into a ConfigMap: put the credentials JSON in a Kubernetes"
                        + " Secret, mount it with secretMounts (e.g. at /var/run/secrets/settle/oauth2) and write"
                        + " credentialsUrl: file:///var/run/secrets/settle/oauth2/credentials.json.");
    }

    @Test
    void plainEnvValueNamedLikeASecretIsRefused() {
        assertThat(refusal("""
                env:
                  - {name: PULSAR_TOKEN, value: not-in-values-please}
                """))
                .contains("env[0] PULSAR_TOKEN has a plain value, and its name says it is a secret: put it in a"
                        + " Kubernetes Secret and reference it with secretEnv.PULSAR_TOKEN (secretName, key), so it never"
                        + " sits in values or in the pod spec.");
    }

    @Test
    void literalTokenInPulsarAdminAuthParamsIsRefused() {
        assertThat(refusal("""
                pulsarPackages:
                  authParams: "token:eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzZXR0bGUifQ.c2lnbmF0dXJl"
                """))
                .contains("pulsarPackages.authParams holds a literal token: put the token in a Secret, add it"
                        + " to secretEnv (e.g. PULSAR_TOKEN: {secretName: pulsar-token, key: token}) and write authParams:"
                        + " \"token:$(PULSAR_TOKEN)\".");
    }

    @Test
    void httpPortGivenAsAVariableIsRefused() {
        assertThat(refusal("""
                manifest:
                  http:
                    port: "${HTTP_PORT:-8080}"
                """))
                .contains("manifest.http.port must be a plain number for this chart (the container port, the"
                        + " probes and the Service follow it), was '${HTTP_PORT:-8080}': write the port itself, not a ${VAR}"
                        + " reference");
    }

    @Test
    void misspelledJarKeyIsRefusedByTheSchema() {
        assertThat(refusal("""
                jars:
                  - name: examples
                    path: /opt/settle/examples/settle-examples.jar
                    sha265: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
                """)).contains("sha265");
    }
}
