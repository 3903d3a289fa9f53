package dev.settle.runtime.live;

import dev.settle.runtime.canary.Thresholds;
import dev.settle.runtime.deployment.PackageFetch;
import dev.settle.runtime.deployment.PackageUpload;
import dev.settle.runtime.isolation.UploadedJar;
import dev.settle.runtime.manifest.AdminSettings;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * {@code settle deploy}, {@code rollback} and {@code status} with {@code --manifest}: the Pulsar store changed and
 * read with the manifest's Pulsar credentials, no running runtime needed (docs/live-code.md, "One way for one pod and
 * for many"). A deploy stores the JAR as a package version and then the record; the runtimes fetch it, check it as
 * an upload is checked (nothing of it runs here) and swap, each saying in its report whether it could.
 */
public final class FleetControl implements AutoCloseable {
    /** Where a ramp is promoted or aborted: this command stores records, only a runtime runs the ramp. */
    private static final String ADMIN_API = " through a runtime's admin API";

    private final Manifest manifest;
    private final String namespace;
    private final FleetRecords records;

    private FleetControl(Manifest manifest, String namespace, FleetRecords records) {
        this.manifest = manifest;
        this.namespace = namespace;
        this.records = records;
    }

    /** @throws IllegalArgumentException when the manifest does not keep its code in Pulsar, saying what to do */
    public static FleetControl open(Manifest manifest, FleetRecords.Clients clients) throws IOException {
        AdminSettings admin = manifest.admin()
                .filter(settings -> settings.codeStore() == AdminSettings.CodeStore.PULSAR)
                .orElseThrow(() -> new IllegalArgumentException(manifest.file()
                        + " does not keep its code in Pulsar (admin.codeStore: pulsar): use --admin and --token-file"
                        + " to reach a running settle instead"));
        String namespace = admin.codeNamespace().orElseThrow();
        String who = System.getProperty("user.name") + " with settle on " + hostName();
        return new FleetControl(manifest, namespace, FleetRecords.open(clients, manifest.pulsar(), namespace, who));
    }

    /**
     * Stores {@code jar} as the subscription's next generation, for every runtime to run.
     *
     * @throws SwapRefusedException when the JAR's entry names are refused or its handler cannot be named
     */
    public Deployed deploy(String subscription, Path jar) throws IOException, SwapRefusedException {
        SubscriptionSpec spec = spec(subscription);
        Optional<CodeStore.State> now = records.desired(subscription).map(FleetRecords.Desired::state);
        Optional<Ramp> running = now.flatMap(CodeStore.State::runningRamp);
        if (running.isPresent()) {
            // As a runtime refuses it (409): the record's ramp would otherwise be dropped by the new state.
            throw SwapRefusedException.duringRamp(subscription, running.get(), "a deploy", ADMIN_API);
        }
        Deployed stored = store(spec, jar, now);
        GenerationRecord next = new GenerationRecord(
                stored.generation(), stored.sha256(), stored.handler(), GenerationRecord.Source.UPLOAD, Instant.now());
        List<GenerationRecord> kept =
                new ArrayList<>(now.map(CodeStore.State::kept).orElse(List.of()));
        kept.add(next);
        write(
                subscription,
                now,
                new CodeStore.State(
                        next.number(), now.map(CodeStore.State::manifestSha256).orElse(""), CodeStore.kept(kept)),
                records.instance());
        return stored;
    }

    /**
     * Checks {@code jar} (its entry names, its one handler) and stores it as a package version, numbered as the
     * generation after those of {@code now}; the record is not written here.
     *
     * @throws SwapRefusedException when the JAR's entry names are refused or its handler cannot be named
     */
    private Deployed store(SubscriptionSpec spec, Path jar, Optional<CodeStore.State> now)
            throws IOException, SwapRefusedException {
        List<String> problems = new ArrayList<>(UploadedJar.entryNameProblems(jar));
        Optional<String> handler = spec.handler().className().or(() -> declaredHandler(jar));
        if (handler.isEmpty()) {
            problems.add(jar + " declares no single handler in META-INF/services/dev.settle.sdk.Handler; declare the"
                    + " one handler, or name it in the manifest's handler:");
        }
        if (!problems.isEmpty()) {
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, problems);
        }
        String sha256 = PackageFetch.sha256(jar);
        int number = now.map(CodeStore.State::highest).orElse(0) + 1;
        PackageUpload.upload(
                manifest.pulsar(),
                PulsarCodeStore.packageOf(namespace, spec.name(), sha256),
                jar,
                "Settle: subscription " + spec.name() + ", handler " + handler.get());
        return new Deployed(spec.name(), number, sha256, handler.get(), activeSha(now), 0);
    }

    /**
     * Stores {@code jar} as the subscription's next generation and records a canary ramp of it (docs/live-code.md,
     * "Canary ramps"): the active generation stays; every runtime reads the ramp, runs the new generation for the
     * first step's slice of keys, judges it on its own outcomes and writes the later steps, the promotion or the
     * rollback, as with a ramp started on one runtime's admin API. Judged with the default thresholds.
     *
     * @throws SwapRefusedException when a ramp runs already (conflict), the steps or the subscription cannot ramp, or
     *     the JAR is refused (invalid); nothing changed
     */
    public Deployed canary(String subscription, Path jar, List<Integer> steps, Duration stepEvery)
            throws IOException, SwapRefusedException {
        SubscriptionSpec spec = spec(subscription);
        if (spec.handler().function()) {
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, List.of(LiveCode.canaryRefusal(spec)));
        }
        List<String> problems = new ArrayList<>();
        String stepProblem = Ramp.problem(steps.isEmpty() ? 0 : steps.get(0), steps, stepEvery);
        if (stepProblem != null) {
            problems.add(stepProblem.replace("ramp.steps", "the steps").replace("ramp.stepEvery", "the step time"));
        } else if (steps.get(0) == 100) {
            problems.add("the first step must be below 100% (a canary judged against nothing); deploy without"
                    + " --canary to swap it in for all keys");
        }
        Optional<CodeStore.State> now = records.desired(subscription).map(FleetRecords.Desired::state);
        if (now.isEmpty()) {
            problems.add("subscription '" + subscription + "' has no record in the store yet: no runtime has run it,"
                    + " so there is no current generation to judge a canary against; start a runtime first");
        }
        Optional<Ramp> running = now.flatMap(CodeStore.State::runningRamp);
        if (running.isPresent()) {
            throw SwapRefusedException.duringRamp(subscription, running.get(), "another canary", ADMIN_API);
        }
        if (!problems.isEmpty()) {
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, problems);
        }
        Deployed stored = store(spec, jar, now);
        CodeStore.State before = now.get();
        GenerationRecord next = new GenerationRecord(
                stored.generation(), stored.sha256(), stored.handler(), GenerationRecord.Source.UPLOAD, Instant.now());
        List<GenerationRecord> kept = new ArrayList<>(before.kept());
        kept.add(next);
        Ramp ramp = Ramp.start(next.number(), steps, stepEvery, Instant.now(), Thresholds.DEFAULTS);
        write(
                subscription,
                now,
                new CodeStore.State(before.active(), before.manifestSha256(), CodeStore.kept(kept), Optional.of(ramp)),
                records.instance() + " (canary)");
        return Deployed.of(subscription, next, activeSha(now), 0);
    }

    /**
     * Sets the subscription's generation back to the kept one below the active one, for every runtime.
     *
     * @throws SwapRefusedException when none is kept
     */
    public Deployed rollback(String subscription) throws IOException, SwapRefusedException {
        spec(subscription);
        Optional<CodeStore.State> now = records.desired(subscription).map(FleetRecords.Desired::state);
        Optional<GenerationRecord> target = now.flatMap(state -> state.kept().stream()
                .filter(g -> g.number() < state.active())
                .max(Comparator.comparingInt(GenerationRecord::number)));
        if (target.isEmpty()) {
            throw new SwapRefusedException(
                    SwapRefusedException.Reason.CONFLICT,
                    List.of("no generation older than the active one is kept for subscription '" + subscription
                            + "'; deploy the JAR to go back to instead"));
        }
        GenerationRecord back = target.get().activated(Instant.now());
        List<GenerationRecord> kept = new ArrayList<>(now.get().kept());
        kept.removeIf(g -> g.number() == back.number());
        kept.add(back);
        write(
                subscription,
                now,
                new CodeStore.State(back.number(), now.get().manifestSha256(), CodeStore.kept(kept)),
                records.instance() + " (rollback)");
        return Deployed.of(subscription, back, activeSha(now), 0);
    }

    /** Writes the record made from {@code basis}; one written meanwhile by someone else is a refusal, 409 as over HTTP. */
    private void write(String subscription, Optional<CodeStore.State> basis, CodeStore.State state, String by)
            throws IOException, SwapRefusedException {
        try {
            records.write(subscription, basis, state, by, Instant.now());
        } catch (GenerationConflictException e) {
            throw new SwapRefusedException(SwapRefusedException.Reason.CONFLICT, List.of(e.getMessage()));
        }
    }

    /** The subscription's active generation in the store, the kept ones, and every runtime's report. */
    public Optional<SubscriptionStatus> status(String subscription) {
        spec(subscription);
        return records.desired(subscription).map(desired -> {
            CodeStore.State state = desired.state();
            return new SubscriptionStatus(
                    subscription,
                    state.generation(state.active()).orElseThrow(),
                    state.kept().stream()
                            .sorted(Comparator.comparingInt(GenerationRecord::number)
                                    .reversed())
                            .toList(),
                    state.active(),
                    Optional.empty(),
                    records.reports(subscription),
                    Optional.empty());
        });
    }

    /** The manifest's subscriptions that can take uploads (not Pulsar Functions). */
    public List<String> subscriptions() {
        return manifest.subscriptions().stream()
                .filter(spec -> !spec.handler().function())
                .map(SubscriptionSpec::name)
                .toList();
    }

    private SubscriptionSpec spec(String subscription) {
        return manifest.subscriptions().stream()
                .filter(spec -> spec.name().equals(subscription))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no subscription '" + subscription + "' in "
                        + manifest.file() + "; it has " + String.join(", ", subscriptions())));
    }

    private static String activeSha(Optional<CodeStore.State> state) {
        return state.flatMap(s -> s.generation(s.active()))
                .map(GenerationRecord::sha256)
                .orElse("");
    }

    /** The one handler a JAR declares, read from its services file without loading anything. */
    private static Optional<String> declaredHandler(Path jar) {
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            ZipEntry entry = zip.getEntry("META-INF/services/dev.settle.sdk.Handler");
            if (entry == null) {
                return Optional.empty();
            }
            try (InputStream in = zip.getInputStream(entry)) {
                List<String> names = new String(in.readNBytes(64 * 1024), StandardCharsets.UTF_8)
                        .lines()
                        .map(line -> line.replaceAll("#.*", "").strip())
                        .filter(line -> !line.isEmpty())
                        .toList();
                return names.size() == 1 ? Optional.of(names.get(0)) : Optional.empty();
            }
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static String hostName() {
        String hostname = System.getenv("HOSTNAME");
        if (hostname != null && !hostname.isBlank()) {
            return hostname.strip();
        }
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown";
        }
    }

    @Override
    public void close() {
        records.close();
    }
}
