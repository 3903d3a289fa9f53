package dev.settle.runtime.live;

import dev.settle.runtime.deployment.PackageFetch;
import dev.settle.runtime.deployment.PackageUpload;
import dev.settle.runtime.manifest.OwnedFolder;
import dev.settle.runtime.manifest.PackageRef;
import dev.settle.runtime.manifest.PulsarSettings;
import dev.settle.runtime.time.Time;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A subscription's generations in Pulsar ({@code admin.codeStore: pulsar}): each uploaded JAR is a package version,
 * {@code function://<codeNamespace>/settle-<subscription>@<sha256>}, and the state is a record in
 * {@link FleetRecords} that every runtime of the deployment reads. A runtime fetches a package with the manifest's
 * credentials from {@code pulsar.adminUrl} alone (never from a URL anyone gives it) into {@code pulsar.packageCache},
 * and refuses it when its sha256 is not the record's.
 */
final class PulsarCodeStore implements CodeStore {
    private final FleetRecords records;
    private final PulsarSettings pulsar;
    private final String namespace;
    private final String subscription;
    private final Path staging;
    private final Time clock;

    /** @param staging a folder of this runtime's own to receive uploads in */
    PulsarCodeStore(
            FleetRecords records,
            PulsarSettings pulsar,
            String namespace,
            String subscription,
            Path staging,
            Time clock) {
        this.records = records;
        this.pulsar = pulsar;
        this.namespace = namespace;
        this.subscription = subscription;
        this.staging = staging;
        this.clock = clock;
    }

    /**
     * The package an upload of {@code subscription} with {@code sha256} is stored as.
     *
     * @throws IllegalArgumentException when {@code sha256} is not one (it becomes a file name and a URL path)
     */
    static PackageRef packageOf(String namespace, String subscription, String sha256) {
        String[] parts = namespace.split("/", 2);
        return new PackageRef(
                "function",
                parts[0],
                parts[1],
                "settle-" + GenerationStore.folderName(subscription),
                RecordChecks.sha256("sha256", sha256));
    }

    @Override
    public boolean shared() {
        return true;
    }

    @Override
    public String where() {
        return "persistent://" + namespace + "/settle-code (key '" + subscription + "')";
    }

    @Override
    public Path stagingFile() throws IOException {
        OwnedFolder.create(staging, "admin.dataDir");
        return Files.createTempFile(staging, "upload-", ".part");
    }

    @Override
    public Path local(String sha256) {
        PackageRef ref = packageOf(namespace, subscription, sha256);
        return pulsar.packageCache()
                .resolve(ref.type())
                .resolve(ref.tenant())
                .resolve(ref.namespace())
                .resolve(ref.name())
                .resolve(ref.version() + ".jar");
    }

    @Override
    public Path fetch(GenerationRecord upload) throws IOException {
        PackageRef ref = packageOf(namespace, subscription, upload.sha256());
        Path jar = local(upload.sha256());
        PackageFetch.fetch(pulsar, ref, jar);
        String fetched = PackageFetch.sha256(jar);
        if (!fetched.equals(upload.sha256())) {
            Files.deleteIfExists(jar);
            Files.deleteIfExists(jar.resolveSibling(jar.getFileName() + ".sha256"));
            throw new IOException("package " + ref + " has sha256 " + fetched + ", but generation " + upload.number()
                    + "'s record says " + upload.sha256() + ": refused; deploy the JAR again");
        }
        return jar;
    }

    @Override
    public Optional<State> load() throws IOException {
        try {
            return records.desired(subscription).map(FleetRecords.Desired::state);
        } catch (FleetRecords.MalformedRecordException malformed) {
            throw new IOException(malformed.getMessage(), malformed);
        }
    }

    @Override
    public State save(Optional<State> basis, State next, String by) throws IOException {
        State state = new State(next.active(), next.manifestSha256(), CodeStore.kept(next.kept()), next.ramp());
        // The packages first: a record never names code that is not stored (the running generation's, and a running
        // ramp's canary, which every runtime loads too).
        List<GenerationRecord> named = new ArrayList<>();
        named.add(state.generation(state.active()).orElseThrow());
        state.runningRamp().flatMap(r -> state.generation(r.generation())).ifPresent(named::add);
        for (GenerationRecord running : named) {
            if (running.source() != GenerationRecord.Source.UPLOAD) {
                continue;
            }
            Path jar = local(running.sha256());
            if (!Files.isRegularFile(jar)) {
                jar = fetch(running);
            }
            PackageUpload.upload(
                    pulsar,
                    packageOf(namespace, subscription, running.sha256()),
                    jar,
                    "Settle: subscription " + subscription + ", handler " + running.handler());
        }
        records.write(subscription, basis, state, by, clock.instant());
        return state;
    }
}
