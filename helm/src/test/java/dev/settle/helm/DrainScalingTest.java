package dev.settle.helm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 48: the Prometheus trigger on the drain time the pods report (settle_backlog_drain_seconds, or the oldest
 * unsettled message's age), and the guard around scaling to zero: the broker-side backlog triggers stay (no pod
 * reports anything at zero replicas), KEDA waits for the first replica to create its subscriptions
 * (kedacore/keda#5417), and only an empty backlog lets it scale to zero.
 */
class DrainScalingTest {
    private static final String VALUES = """
            manifest:
              subscriptions:
                - name: orders-processor
                  topics: [persistent://public/default/orders]
                  jar: /opt/settle/examples/settle-examples.jar
            keda:
              enabled: true
              adminURL: http://pulsar-broker.pulsar.svc.cluster.local:8080
              msgBacklogThreshold: "200"
            """;

    @TempDir
    Path scratch;

    private static List<Map<String, Object>> triggers(Rendered rendered) {
        return Yamls.list(Yamls.at(rendered.one("ScaledObject"), "spec").get("triggers"), "triggers").stream()
                .map(trigger -> Yamls.map(trigger, "a trigger"))
                .toList();
    }

    @Test
    void thePrometheusTriggerScalesOnTheDrainTimeOfThisReleasesPodsBesideTheBacklog() {
        Rendered rendered = SettleChart.render(scratch, VALUES + """
                  prometheus:
                    enabled: true
                    serverAddress: http://prometheus-operated.monitoring.svc:9090
                    threshold: "90"
                """);

        List<Map<String, Object>> triggers = triggers(rendered);
        assertThat(triggers).extracting(trigger -> trigger.get("type")).containsExactly("pulsar", "prometheus");
        Map<String, Object> prometheus = Yamls.at(triggers.get(1), "metadata");
        assertThat(prometheus)
                .containsEntry("serverAddress", "http://prometheus-operated.monitoring.svc:9090")
                .containsEntry("threshold", "90")
                .containsEntry(
                        "query",
                        "max(settle_backlog_drain_seconds{namespace=\"" + SettleChart.NAMESPACE + "\",pod=~\""
                                + SettleChart.FULLNAME + "-.*\"})");
    }

    @Test
    void theOldestUnsettledAgeAndAQueryOfOnesOwnCanBeChosen() {
        Rendered age = SettleChart.render(scratch, VALUES + """
                  prometheus:
                    enabled: true
                    serverAddress: http://prometheus:9090
                    metric: settle_oldest_unsettled_age_seconds
                """);
        assertThat(Yamls.at(triggers(age).get(1), "metadata").get("query"))
                .asString()
                .startsWith("max(settle_oldest_unsettled_age_seconds{");
        Rendered own = SettleChart.render(scratch, VALUES + """
                  prometheus:
                    enabled: true
                    serverAddress: http://prometheus:9090
                    query: sum(settle_backlog_drain_seconds)
                """);
        assertThat(Yamls.at(triggers(own).get(1), "metadata"))
                .containsEntry("query", "sum(settle_backlog_drain_seconds)");
    }

    @Test
    void scalingToZeroWaitsForTheFirstReplicaAndKeepsTheBrokerSideTriggers() {
        Rendered rendered = SettleChart.render(scratch, VALUES + """
                  minReplicaCount: 0
                  activationMsgBacklogThreshold: "0"
                  prometheus:
                    enabled: true
                    serverAddress: http://prometheus:9090
                """);

        Map<String, Object> spec = Yamls.at(rendered.one("ScaledObject"), "spec");
        assertThat(spec).containsEntry("minReplicaCount", 0).containsEntry("initialCooldownPeriod", 300);
        assertThat(triggers(rendered))
                .filteredOn(trigger -> "pulsar".equals(trigger.get("type")))
                .singleElement()
                .satisfies(trigger ->
                        assertThat(Yamls.at(trigger, "metadata")).containsEntry("activationMsgBacklogThreshold", "0"));
    }

    @Test
    void withoutScalingToZeroThereIsNoInitialCooldown() {
        assertThat(Yamls.at(SettleChart.render(scratch, VALUES).one("ScaledObject"), "spec"))
                .doesNotContainKey("initialCooldownPeriod");
    }

    @Test
    void scalingToZeroWithMessagesWaitingIsRefused() {
        assertThat(SettleChart.refusal(scratch, VALUES + """
                  minReplicaCount: 0
                  activationMsgBacklogThreshold: "5"
                """))
                .contains("keda.minReplicaCount is 0 and keda.activationMsgBacklogThreshold is '5'")
                .contains("set keda.activationMsgBacklogThreshold to \"0\"");
    }

    @Test
    void scalingToZeroBeforeTheSubscriptionsCanExistIsRefused() {
        assertThat(SettleChart.refusal(scratch, VALUES + """
                  minReplicaCount: 0
                  activationMsgBacklogThreshold: "0"
                  initialCooldownPeriod: 10
                """))
                .contains("keda.initialCooldownPeriod is 10")
                .contains("kedacore/keda#5417")
                .contains("settle preflight --scale-to-zero");
    }

    @Test
    void aPrometheusTriggerWithoutItsServerIsRefused() {
        assertThat(SettleChart.refusal(scratch, VALUES + """
                  prometheus:
                    enabled: true
                """))
                .contains("keda.prometheus.enabled needs keda.prometheus.serverAddress");
        assertThat(SettleChart.refusal(scratch, VALUES + """
                  prometheus:
                    enabled: true
                    serverAddress: http://prometheus:9090
                    threshold: "a minute"
                """)).contains("keda.prometheus.threshold is 'a minute'");
    }
}
