package dev.settle.runtime.live;

import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.HandlerContext;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which generation a subscription runs first after a start (docs/live-code.md, "Restarts"): the store's active one,
 * an upload restored and opened here, unless the manifest's own {@code jar:} changed since (then the manifest wins).
 */
final class FirstGeneration {
    private static final Logger log = LoggerFactory.getLogger(FirstGeneration.class);

    private FirstGeneration() {}

    /**
     * Decides, from the data folder, what runs first: the last active generation, unless the manifest's own
     * {@code jar:} changed since it was written (then the manifest wins); an upload to restore is loaded and opened
     * here. Logs which and why.
     */
    static LiveSubscription restore(
            SubscriptionSpec spec,
            HandlerContext context,
            LoadedHandler manifestHandler,
            CodeStore store,
            Runnable releaseManifestLoader,
            LiveParts parts)
            throws IOException {
        String manifestSha = JarDigest.of(spec.handler().jar());
        LiveSubscription live = new LiveSubscription(spec, context, store, manifestSha, releaseManifestLoader, parts);
        Optional<CodeStore.State> saved = store.load();
        List<GenerationRecord> kept =
                new ArrayList<>(saved.map(CodeStore.State::kept).orElse(List.of()));
        int next = saved.map(CodeStore.State::highest).orElse(0) + 1;
        GenerationRecord manifest = new GenerationRecord(
                next,
                manifestSha,
                manifestHandler.className(),
                GenerationRecord.Source.MANIFEST,
                parts.clock().instant());
        GenerationRecord chosen = manifest;
        if (saved.isEmpty()) {
            log.info(
                    "subscription '{}': no kept generations in {}: running the manifest's jar as generation {}",
                    spec.name(),
                    store.where(),
                    next);
        } else if (!saved.get().manifestSha256().isEmpty()
                && !saved.get().manifestSha256().equals(manifestSha)) {
            // Empty: written by settle deploy --manifest before any runtime ran; the deploy stands.
            log.info(
                    "subscription '{}': the manifest's jar {} changed since generation {} was made active: the"
                            + " manifest wins, running it as generation {}",
                    spec.name(),
                    spec.handler().jar(),
                    saved.get().active(),
                    next);
        } else {
            GenerationRecord active = saved.get()
                    .generation(saved.get().active())
                    .orElseThrow(() -> new IOException(store.where() + ": the active generation "
                            + saved.get().active() + " is not among the kept ones; move the folder away to start"
                            + " from the manifest"));
            if (active.source() == GenerationRecord.Source.MANIFEST) {
                chosen = manifestHandler.className().equals(active.handler()) ? active : manifest;
                log.info(
                        "subscription '{}': running generation {}, the manifest's jar (unchanged since)",
                        spec.name(),
                        chosen.number());
            } else {
                try {
                    live.restores(live.open(active));
                    chosen = active;
                    log.info(
                            "subscription '{}': restoring uploaded generation {} (sha256 {}, {}): the manifest's"
                                    + " jar is unchanged since it was uploaded",
                            spec.name(),
                            active.number(),
                            active.sha256(),
                            active.handler());
                } catch (SwapRefusedException e) {
                    log.error(
                            "subscription '{}': uploaded generation {} cannot run again ({}); running the"
                                    + " manifest's jar as generation {}",
                            spec.name(),
                            active.number(),
                            e.getMessage(),
                            next);
                    if (store.shared()) {
                        // The other runtimes go on with the generation: this one says why it cannot, and does not
                        // make its own fallback the fleet's.
                        live.cannotRun("cannot run generation " + active.number() + " (sha256 " + active.shortSha()
                                + "): " + e.getMessage());
                        live.startsWith(manifest, saved.get());
                        return live;
                    }
                }
            }
        }
        if (chosen == manifest) {
            kept.add(manifest);
        }
        // A shared store is written only when this start changes what runs: rewriting the state it read could undo
        // a deploy another runtime made meanwhile.
        if (chosen != manifest && store.shared()) {
            live.startsWith(chosen, saved.get());
            return live;
        }
        try {
            live.startsWith(
                    chosen, store.save(saved, chosen.number(), manifestSha, kept, "start of " + parts.instance()));
        } catch (GenerationConflictException e) {
            // Another runtime of the fleet, starting on the same changed manifest, recorded it first: run its record.
            Optional<CodeStore.State> now = e.recordedByAnother(chosen);
            if (now.isEmpty()) {
                throw e;
            }
            live.startsWith(now.get().generation(now.get().active()).orElseThrow(), now.get());
        }
        return live;
    }
}
