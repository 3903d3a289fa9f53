package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.PulsarClients;
import dev.settle.runtime.isolation.TestJar;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestLoader;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.Waits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 41, item 11: two fleet uploads at once (two {@code settle deploy --manifest}, each with its own view of the
 * records, as two runtimes or a runtime behind a lagging follower have) never take the same generation number. Raced
 * 20 times against a real broker with package management: each time exactly one is stored, the other is refused as a
 * conflict naming the generation it lost to, and the store ends with generations 1 to 20, each an upload that was
 * answered as stored. Failed before: both were answered as stored under the same number, and the last writer's record
 * replaced the other's.
 */
// On the shared broker (package management on), as FleetCodeIT, its subscriptions named its own.
class FleetUploadRaceIT {
    @TempDir
    static Path folder;

    @RegisterExtension
    static final PulsarFixture broker = PulsarFixture.shared();

    private static Path handler(String label) {
        return TestJar.at(folder.resolve(label + ".jar"))
                .source("test.Stamp", """
                        package test;
                        import dev.settle.sdk.*;
                        public class Stamp implements Handler<String> {
                            private final String label = "%s";
                            @Override public Outcome handle(Delivery<String> delivery) {
                                return label.isEmpty() ? Outcome.drop() : Outcome.ack();
                            }
                        }
                        """.formatted(label))
                .services("test.Stamp")
                .build();
    }

    @Test
    void twoUploadsAtOnceNeverTakeTheSameGenerationTheSecondIsRefusedNamingTheFirst() throws Exception {
        Path one = handler("race-one");
        Path two = handler("race-two");
        String subscription = PulsarFixture.unique("race");
        Path file = Files.writeString(folder.resolve("race.yaml"), """
                pulsar:
                  serviceUrl: %s
                  adminUrl: %s
                  packageCache: %s
                admin:
                  token: {file: token.txt}
                  dataDir: %s
                  codeStore: pulsar
                  codeNamespace: public/default
                subscriptions:
                  - name: %s
                    topics: [persistent://public/default/%s]
                    jar: %s
                """.formatted(
                        broker.endpoints().serviceUrl(),
                        broker.endpoints().adminUrl(),
                        folder.resolve("cache"),
                        folder.resolve("data"),
                        subscription,
                        subscription,
                        one));
        Files.writeString(folder.resolve("token.txt"), "0123456789abcdef0123456789abcdef-race\n");
        Manifest manifest = ManifestLoader.loadWithoutJars(file, Map.of());
        ExecutorService both = Executors.newFixedThreadPool(2);
        List<Deployed> stored = new ArrayList<>();
        try (FleetControl first = FleetControl.open(manifest, PulsarClients::create);
                FleetControl second = FleetControl.open(manifest, PulsarClients::create)) {
            int rounds = 20;
            for (int round = 1; round <= rounds; round++) {
                int expected = round;
                // Both start from the latest record, so each makes generation `round` of it.
                awaitActive(first, subscription, round - 1);
                awaitActive(second, subscription, round - 1);
                CountDownLatch go = new CountDownLatch(1);
                CompletableFuture<Object> a =
                        CompletableFuture.supplyAsync(() -> deploy(go, first, subscription, one), both);
                CompletableFuture<Object> b =
                        CompletableFuture.supplyAsync(() -> deploy(go, second, subscription, two), both);
                go.countDown();
                List<Object> answers = List.of(a.get(60, TimeUnit.SECONDS), b.get(60, TimeUnit.SECONDS));
                List<Deployed> deployed = answers.stream()
                        .filter(Deployed.class::isInstance)
                        .map(Deployed.class::cast)
                        .toList();
                List<SwapRefusedException> refused = answers.stream()
                        .filter(SwapRefusedException.class::isInstance)
                        .map(SwapRefusedException.class::cast)
                        .toList();
                assertThat(deployed).as("round %d: stored", round).hasSize(1);
                assertThat(deployed.get(0).generation()).as("round %d", round).isEqualTo(expected);
                assertThat(refused).as("round %d: refused", round).hasSize(1);
                assertThat(refused.get(0).reason()).isEqualTo(SwapRefusedException.Reason.CONFLICT);
                assertThat(refused.get(0).getMessage())
                        .as("round %d: names the generation it lost to", round)
                        .contains("lost to generation " + expected + " (sha256 "
                                + deployed.get(0).sha256().substring(0, 12));
                stored.add(deployed.get(0));
            }
            awaitActive(first, subscription, rounds);
            SubscriptionStatus status = first.status(subscription).orElseThrow();
            assertThat(status.active().sha256())
                    .isEqualTo(stored.get(rounds - 1).sha256());
            assertThat(status.kept())
                    .extracting(GenerationRecord::sha256)
                    .as("the kept generations are the ones answered as stored")
                    .containsExactly(
                            stored.get(rounds - 1).sha256(),
                            stored.get(rounds - 2).sha256(),
                            stored.get(rounds - 3).sha256());
        } finally {
            both.shutdownNow();
        }
    }

    /**
     * Every runtime of a fleet reloads the same manifest at about the same time (a ConfigMap mounted in every pod):
     * with the fence, all but the first lose the write, and each must run the first one's record of the same code
     * rather than fail. Two runtimes started at once (both record the manifest's jar at start) and reloaded at once, three
     * times: every reload applied, both on the same generation each time.
     */
    @Test
    void runtimesReloadingTheSameManifestAtOnceAllApplyItAsOneGeneration() throws Exception {
        String subscription = PulsarFixture.unique("reload-race");
        List<Path> jars =
                List.of(handler("reload-v1"), handler("reload-v2"), handler("reload-v3"), handler("reload-v4"));
        Files.writeString(folder.resolve("token.txt"), "0123456789abcdef0123456789abcdef-race\n");
        List<Path> manifests = List.of(folder.resolve("reload-a.yaml"), folder.resolve("reload-b.yaml"));
        for (Path manifest : manifests) {
            Files.writeString(manifest, reloadManifest(manifest, subscription, jars.get(0)));
        }
        ExecutorService both = Executors.newFixedThreadPool(2);
        List<dev.settle.runtime.Settle> runtimes = new ArrayList<>();
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<CompletableFuture<dev.settle.runtime.Settle>> starting = manifests.stream()
                    .map(manifest -> CompletableFuture.supplyAsync(
                            () -> {
                                try {
                                    go.await();
                                    return dev.settle.runtime.Settle.start(
                                            dev.settle.runtime.deployment.Preflight.check(manifest, Map.of()),
                                            Duration.ofSeconds(5));
                                } catch (Exception e) {
                                    throw new IllegalStateException(e);
                                }
                            },
                            both))
                    .toList();
            go.countDown();
            for (CompletableFuture<dev.settle.runtime.Settle> start : starting) {
                runtimes.add(start.get(120, TimeUnit.SECONDS));
            }
            for (int version = 1; version < jars.size(); version++) {
                for (Path manifest : manifests) {
                    Files.writeString(manifest, reloadManifest(manifest, subscription, jars.get(version)));
                }
                CountDownLatch reload = new CountDownLatch(1);
                List<CompletableFuture<dev.settle.runtime.ReloadResult>> reloading = new ArrayList<>();
                for (int i = 0; i < runtimes.size(); i++) {
                    dev.settle.runtime.Settle runtime = runtimes.get(i);
                    Path manifest = manifests.get(i);
                    reloading.add(CompletableFuture.supplyAsync(
                            () -> {
                                try {
                                    reload.await();
                                } catch (InterruptedException e) {
                                    throw new IllegalStateException(e);
                                }
                                return runtime.reload(manifest, Map.of());
                            },
                            both));
                }
                reload.countDown();
                for (CompletableFuture<dev.settle.runtime.ReloadResult> result : reloading) {
                    assertThat(result.get(120, TimeUnit.SECONDS))
                            .as("reload to v%d", version + 1)
                            .isEqualTo(dev.settle.runtime.ReloadResult.APPLIED);
                }
                List<GenerationRecord> running = runtimes.stream()
                        .map(runtime -> runtime.live()
                                .orElseThrow()
                                .status(subscription)
                                .orElseThrow()
                                .active())
                        .toList();
                assertThat(running.get(0).sha256()).isEqualTo(JarDigest.of(jars.get(version)));
                assertThat(running.get(1).number())
                        .as("v%d: both runtimes on one generation", version + 1)
                        .isEqualTo(running.get(0).number());
            }
        } finally {
            for (dev.settle.runtime.Settle runtime : runtimes) {
                runtime.close();
                runtime.deployment().close();
            }
            both.shutdownNow();
        }
    }

    private static String reloadManifest(Path manifest, String subscription, Path jar) {
        String name = manifest.getFileName().toString().replace(".yaml", "");
        return """
                pulsar:
                  serviceUrl: %s
                  adminUrl: %s
                  packageCache: %s
                http:
                  port: 0
                admin:
                  port: 0
                  token: {file: token.txt}
                  dataDir: %s
                  codeStore: pulsar
                  codeNamespace: public/default
                subscriptions:
                  - name: %s
                    topics: [persistent://public/default/%s]
                    type: Shared
                    jar: %s
                """.formatted(
                        broker.endpoints().serviceUrl(),
                        broker.endpoints().adminUrl(),
                        folder.resolve(name + "-cache"),
                        folder.resolve(name + "-data"),
                        subscription,
                        subscription,
                        jar);
    }

    /** A deploy once {@code go} opens: its answer, or the refusal. */
    private static Object deploy(CountDownLatch go, FleetControl control, String subscription, Path jar) {
        try {
            go.await();
            return control.deploy(subscription, jar);
        } catch (SwapRefusedException e) {
            return e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Waits until this control's view of the records has {@code generation} active (0: no record yet). */
    private static void awaitActive(FleetControl control, String subscription, int generation) throws Exception {
        Waits.until(
                "generation " + generation + " active in the records",
                Duration.ofSeconds(30),
                () -> control.status(subscription),
                status -> status.map(s -> s.active().number()).orElse(0) == generation);
    }
}
