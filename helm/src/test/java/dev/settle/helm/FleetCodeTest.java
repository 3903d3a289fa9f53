package dev.settle.helm;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With the code kept in Pulsar ({@code manifest.admin.codeStore: pulsar}, docs/helm.md): the admin API with any
 * number of pods, HPA or KEDA, and a change of a subscription's code alone does not roll the pods.
 */
class FleetCodeTest {
    @TempDir
    Path scratch;

    private String fleet() throws Exception {
        return Files.readString(SettleChart.scenario("fleet-code"));
    }

    private static Object checksum(Rendered rendered) {
        return Yamls.at(rendered.deployment(), "spec", "template", "metadata", "annotations")
                .get("checksum/manifest");
    }

    @Test
    void theAdminApiRunsOnEveryPodWithHpaOrKeda() throws Exception {
        Rendered three = SettleChart.render(SettleChart.scenario("fleet-code"));
        assertThat(Yamls.at(three.deployment(), "spec")).containsEntry("replicas", 3);
        Rendered hpa = SettleChart.render(scratch, fleet() + "autoscaling: {enabled: true, maxReplicas: 6}\n");
        assertThat(hpa.kinds()).contains("HorizontalPodAutoscaler");
        Rendered keda = SettleChart.render(scratch, fleet() + "keda: {enabled: true}\n");
        assertThat(keda.kinds()).contains("ScaledObject");
    }

    @Test
    void aChangeOfCodeAloneDoesNotRollThePodsWhenTheCodeIsInPulsar() throws Exception {
        Object before = checksum(SettleChart.render(scratch, fleet()));
        Object newJar = checksum(SettleChart.render(scratch, fleet().replace("release: \"1\"", "release: \"2\"")));
        Object newSetting = checksum(SettleChart.render(scratch, fleet().replace("type: Shared", "type: Key_Shared")));
        assertThat(newJar)
                .as("new code (config): swapped by the runtimes, no restart")
                .isEqualTo(before);
        assertThat(newSetting).as("a consumer setting: rolls the pods").isNotEqualTo(before);
    }

    @Test
    void onDiskAChangeOfCodeRollsThePodsAsBefore() throws Exception {
        String disk = fleet().replace("    codeStore: pulsar\n    codeNamespace: public/default\n", "")
                .replace("replicaCount: 3", "replicaCount: 1");
        Object before = checksum(SettleChart.render(scratch, disk));
        Object newJar = checksum(SettleChart.render(scratch, disk.replace("release: \"1\"", "release: \"2\"")));
        assertThat(newJar).isNotEqualTo(before);
    }
}
