package dev.settle.runtime.live;

import dev.settle.runtime.manifest.UntrustedText;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * Where a subscription's generations are kept (docs/live-code.md, "Where code is kept"): on this pod's disk
 * ({@link GenerationStore}, {@code admin.codeStore: disk}, the default) or in Pulsar ({@link PulsarCodeStore},
 * {@code admin.codeStore: pulsar}), where every runtime of the deployment reads the same record.
 *
 * <p>Not thread-safe: its {@link LiveSubscription} calls it under its own lock.
 */
interface CodeStore {
    /** Generations kept for rollback, the running one included. */
    int KEPT = 3;

    /** What the store says: which generation runs, the manifest's own {@code jar:} sha256 then, the kept ones. */
    record State(int active, String manifestSha256, List<GenerationRecord> kept, Optional<Ramp> ramp) {
        public State {
            kept = List.copyOf(kept);
            java.util.Objects.requireNonNull(ramp, "ramp");
        }

        /** A state without a ramp. */
        public State(int active, String manifestSha256, List<GenerationRecord> kept) {
            this(active, manifestSha256, kept, Optional.empty());
        }

        /** The same generations with {@code next} as the ramp (the last one, ended, stays until the next starts). */
        State withRamp(Ramp next) {
            return new State(active, manifestSha256, kept, Optional.of(next));
        }

        /** The ramp when one runs now. */
        Optional<Ramp> runningRamp() {
            return ramp.filter(Ramp::running);
        }

        Optional<GenerationRecord> generation(int number) {
            return kept.stream().filter(g -> g.number() == number).findFirst();
        }

        int highest() {
            return kept.stream().mapToInt(GenerationRecord::number).max().orElse(0);
        }

        /** The same state as properties: the format of the disk's state file and of the record in Pulsar. */
        Properties properties() {
            Properties properties = new Properties();
            properties.setProperty("active", Integer.toString(active));
            properties.setProperty("manifestSha256", manifestSha256);
            properties.setProperty(
                    "kept", kept.stream().map(g -> Integer.toString(g.number())).collect(Collectors.joining(",")));
            for (GenerationRecord generation : kept) {
                String prefix = "generation." + generation.number() + ".";
                properties.setProperty(prefix + "sha256", generation.sha256());
                properties.setProperty(prefix + "handler", generation.handler());
                properties.setProperty(prefix + "source", generation.source().name());
                properties.setProperty(
                        prefix + "activatedAt", generation.activatedAt().toString());
            }
            ramp.ifPresent(r -> r.write(properties));
            return properties;
        }

        /**
         * Reads a state, every field checked as data first ({@link RecordChecks}): nothing of a malformed record is
         * used.
         *
         * @throws IllegalArgumentException naming the first field missing or malformed, and what it must be
         */
        static State of(Properties properties) {
            List<GenerationRecord> kept = new ArrayList<>();
            for (String text : properties.getProperty("kept", "").split(",")) {
                if (text.isBlank()) {
                    continue;
                }
                int number = RecordChecks.generation("kept", text);
                String prefix = "generation." + number + ".";
                GenerationRecord.Source source = source(prefix + "source", properties.getProperty(prefix + "source"));
                String sha256 = properties.getProperty(prefix + "sha256");
                kept.add(new GenerationRecord(
                        number,
                        source == GenerationRecord.Source.UPLOAD
                                ? RecordChecks.sha256(prefix + "sha256", sha256)
                                : RecordChecks.sha256OrEmpty(prefix + "sha256", sha256),
                        RecordChecks.className(prefix + "handler", properties.getProperty(prefix + "handler")),
                        source,
                        instant(prefix + "activatedAt", properties.getProperty(prefix + "activatedAt"))));
            }
            int active = RecordChecks.generation("active", properties.getProperty("active"));
            Optional<Ramp> ramp = Optional.ofNullable(Ramp.read(properties));
            if (ramp.isPresent() && ramp.get().running()) {
                int canary = ramp.get().generation();
                if (canary == active || kept.stream().noneMatch(g -> g.number() == canary)) {
                    throw new IllegalArgumentException("ramp.generation must be a kept generation other than the"
                            + " active one (" + active + "), was " + canary);
                }
            }
            return new State(
                    active,
                    RecordChecks.sha256OrEmpty("manifestSha256", properties.getProperty("manifestSha256", "")),
                    kept,
                    ramp);
        }

        private static GenerationRecord.Source source(String field, String value) {
            for (GenerationRecord.Source source : GenerationRecord.Source.values()) {
                if (source.name().equals(value)) {
                    return source;
                }
            }
            throw new IllegalArgumentException(field + " must be MANIFEST or UPLOAD, was "
                    + (value == null ? "missing" : "'" + UntrustedText.escape(value, 100) + "'"));
        }

        static Instant instant(String field, String value) {
            try {
                return Instant.parse(value == null ? "" : value);
            } catch (DateTimeParseException e) {
                throw new IllegalArgumentException(field + " must be a time such as 2026-01-01T00:00:00Z, was "
                        + (value == null ? "missing" : "'" + UntrustedText.escape(value, 100) + "'"));
            }
        }
    }

    /**
     * Whether other runtimes read this store too: then a runtime writes it only to change what all run (an upload, a
     * rollback, a changed manifest), never what only it decided (a fallback of its own).
     */
    default boolean shared() {
        return false;
    }

    /** Where the store is, for the log: a folder, or a topic and a namespace of packages. */
    String where();

    /** A new local file to receive an upload; the caller moves it to {@link #local} or deletes it. */
    Path stagingFile() throws IOException;

    /** Where an uploaded generation's JAR is kept on this pod (it may not be there yet: see {@link #fetch}). */
    Path local(String sha256);

    /**
     * Makes sure an uploaded generation's JAR is at {@link #local}, its sha256 the record's: the disk store only
     * looks; the Pulsar store fetches the package with the manifest's credentials and refuses other bytes.
     *
     * @throws IOException saying what is wrong and what to do
     */
    Path fetch(GenerationRecord upload) throws IOException;

    /** The stored state, or empty when there is none yet; an active upload's JAR is fetched ({@link #fetch}). */
    Optional<State> load() throws IOException;

    /**
     * Stores a new state, keeping the {@link #KEPT} highest generations; in Pulsar, an active upload's JAR is stored as
     * a package version before the record that names it, and the record is written only if the stored one is still at
     * {@code basis}'s generations (the disk store has one writer, this runtime, and ignores it).
     *
     * @param basis the state the change was made from; empty when there was none
     * @param by who made the change, for the record
     * @throws GenerationConflictException when another runtime wrote the record since {@code basis}
     */
    default State save(
            Optional<State> basis, int active, String manifestSha256, List<GenerationRecord> generations, String by)
            throws IOException {
        return save(basis, new State(active, manifestSha256, kept(generations)), by);
    }

    /**
     * Stores {@code next} (its kept generations the {@link #KEPT} highest, its ramp if any) as
     * {@link #save(Optional, int, String, List, String)} does.
     */
    State save(Optional<State> basis, State next, String by) throws IOException;

    /** The generations to keep: the {@link #KEPT} highest. */
    static List<GenerationRecord> kept(List<GenerationRecord> generations) {
        return generations.stream()
                .sorted(java.util.Comparator.comparingInt(GenerationRecord::number)
                        .reversed())
                .limit(KEPT)
                .toList();
    }
}
