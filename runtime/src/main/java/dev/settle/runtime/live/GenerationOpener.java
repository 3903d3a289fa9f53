package dev.settle.runtime.live;

import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.SdkHandlerPort;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.isolation.HandlerLoader;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.isolation.UploadedJar;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.HandlerContext;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns code into a generation ready to swap in for one subscription: an uploaded JAR or a kept generation, loaded,
 * checked as every upload is (its entry names, its sha256, its handler, its fit to the subscription) and opened. A
 * refusal names every problem and leaves the running generation as it is.
 *
 * <p>Called under its subscription's monitor, as its deploys are.
 */
final class GenerationOpener {
    private static final Logger log = LoggerFactory.getLogger(GenerationOpener.class);

    /** What the opener reads of its subscription as it is now: a manifest reload replaces its spec and context. */
    interface Subscription {
        SubscriptionSpec spec();

        HandlerContext context();

        /** The number a new generation gets: one above every generation recorded. */
        int nextNumber();

        /** Whether a generation of the code with this sha256 is kept. */
        boolean keeps(String sha256);

        /** The running code; null before the first generation runs (while an upload is restored at start). */
        CurrentGeneration code();

        /** Where the subscription's generations are kept. */
        CodeStore store();
    }

    private final Subscription live;
    /** The metrics and the clock new generations are dated by. */
    private final LiveParts parts;

    GenerationOpener(Subscription live, LiveParts parts) {
        this.live = live;
        this.parts = parts;
    }

    /**
     * Checks an uploaded JAR completely and opens it as the next generation, not swapped in.
     *
     * @param staged the uploaded bytes, in the data folder; moved into place or deleted here
     * @throws SwapRefusedException with every problem; nothing changed
     */
    Generation checkedUpload(Path staged, String sha256) throws SwapRefusedException, IOException {
        SubscriptionSpec spec = live.spec();
        Path jar = live.store().local(sha256);
        boolean existed = Files.exists(jar);
        Files.createDirectories(jar.getParent());
        if (existed) {
            Files.delete(staged);
        } else {
            GenerationStore.moveIntoPlace(staged, jar);
        }
        List<String> problems = new ArrayList<>(UploadedJar.entryNameProblems(jar));
        HandlerLoader loader = HandlerLoader.forUploads();
        Generation next = null;
        if (problems.isEmpty()) {
            try {
                LoadedHandler loaded = loader.load(jar, spec.handler().className());
                problems.addAll(fit(loaded));
                if (problems.isEmpty()) {
                    next = opened(
                            new GenerationRecord(
                                    live.nextNumber(),
                                    sha256,
                                    loaded.className(),
                                    GenerationRecord.Source.UPLOAD,
                                    parts.clock().instant()),
                            loaded,
                            loader);
                }
            } catch (HandlerLoadException e) {
                problems.add(e.forUpload(jar));
            } catch (SwapRefusedException e) {
                problems.addAll(e.problems());
            }
        } else {
            problems.add("the handler was not loaded: fix the problems above first");
        }
        if (next == null) {
            loader.close();
            if (!existed && !live.keeps(sha256)) {
                Files.deleteIfExists(jar);
            }
            parts.metrics().refused(spec.name());
            log.warn("subscription '{}': upload {} refused: {}", spec.name(), sha256, String.join("; ", problems));
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, problems);
        }
        return next;
    }

    /**
     * Loads and opens a kept generation again, from the store or the manifest's jar, checked as an upload is (its
     * sha256 against the record, its entry names, its handler and its fit).
     */
    Generation open(GenerationRecord record) throws SwapRefusedException {
        boolean upload = record.source() == GenerationRecord.Source.UPLOAD;
        Path jar;
        try {
            jar = upload ? live.store().fetch(record) : live.spec().handler().jar();
        } catch (IOException e) {
            throw new SwapRefusedException(SwapRefusedException.Reason.CONFLICT, List.of(e.getMessage()));
        }
        try {
            if (!Files.exists(jar) || !JarDigest.of(jar).equals(record.sha256())) {
                throw new SwapRefusedException(
                        SwapRefusedException.Reason.CONFLICT,
                        List.of("generation " + record.number() + "'s code is gone: " + jar
                                + (upload ? " is missing or changed" : " (the manifest's jar) changed since")
                                + "; upload the JAR again instead"));
            }
        } catch (IOException e) {
            throw new SwapRefusedException(
                    SwapRefusedException.Reason.CONFLICT, List.of("cannot read " + jar + ": " + e.getMessage()));
        }
        if (upload) {
            List<String> names = UploadedJar.entryNameProblems(jar);
            if (!names.isEmpty()) {
                throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, names);
            }
        }
        HandlerLoader loader = upload ? HandlerLoader.forUploads() : new HandlerLoader();
        try {
            LoadedHandler loaded = loader.load(jar, Optional.of(record.handler()));
            List<String> problems = fit(loaded);
            if (!problems.isEmpty()) {
                throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, problems);
            }
            return opened(record, loaded, loader);
        } catch (HandlerLoadException e) {
            loader.close();
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, List.of(e.getMessage()));
        } catch (SwapRefusedException | RuntimeException e) {
            loader.close();
            throw e;
        }
    }

    /** Opens a loaded handler as a generation; {@code open()} failing is a refusal. */
    private Generation opened(GenerationRecord record, LoadedHandler loaded, HandlerLoader loader)
            throws SwapRefusedException {
        HandlerPort newPort = swappedIn(loaded, live.spec());
        try {
            loaded.open(live.context());
        } catch (HandlerLoadException e) {
            String problem = record.source() == GenerationRecord.Source.UPLOAD
                    ? e.forUpload(live.store().local(record.sha256()))
                    : e.getMessage();
            throw new SwapRefusedException(SwapRefusedException.Reason.INVALID, List.of(problem));
        }
        return new Generation(record, loaded, newPort, loader);
    }

    /**
     * The port of {@code loaded} swapped in for the running code: a batch handler gathered as the running one is
     * ({@link CurrentGeneration#swappedIn}). Before the first generation runs (an upload restored at start) a batch
     * handler is refused: its gathering is made with the driver's clock and metrics, which only a running generation
     * hands on.
     */
    HandlerPort swappedIn(LoadedHandler loaded, SubscriptionSpec spec) throws SwapRefusedException {
        CurrentGeneration port = live.code();
        if (port != null) {
            return port.swappedIn(loaded, spec);
        }
        if (loaded.isBatch()) {
            throw new SwapRefusedException(
                    SwapRefusedException.Reason.INVALID,
                    List.of("handler " + loaded.className() + " is a BatchHandler, which an upload restored at start"
                            + " cannot run yet; make its JAR the manifest's jar: and restart, or upload it again"
                            + " once the subscription runs"));
        }
        return SdkHandlerPort.swappedIn(loaded, spec);
    }

    /** Whether a loaded handler can take this subscription's messages: the declared schema, the consumer's. */
    List<String> fit(LoadedHandler loaded) {
        CurrentGeneration port = live.code();
        if (port == null) {
            List<String> problems = new ArrayList<>();
            Preflight.schemaMisfit(live.spec(), loaded).ifPresent(problems::add);
            return problems;
        }
        return port.misfit(loaded, live.spec());
    }
}
