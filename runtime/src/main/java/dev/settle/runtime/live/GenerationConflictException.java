package dev.settle.runtime.live;

import java.io.IOException;
import java.util.Optional;

/**
 * A subscription's record in the shared store changed between reading it and writing the next one (issue 41): another
 * upload, rollback or reload, through another runtime or {@code settle deploy --manifest}, was written first. Nothing
 * of this change was stored; the admin API answers 409 naming the generation this change lost to.
 */
final class GenerationConflictException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The store's record that won, as the fenced write read it. */
    private final transient CodeStore.State latest;

    GenerationConflictException(String subscription, FleetRecords.Desired latest, Optional<CodeStore.State> basis) {
        super(message(subscription, latest, basis));
        this.latest = latest.state();
    }

    /**
     * The record that won: read under the fence, so newer than what this runtime's view of the store may have
     * received yet (FleetUploadRaceIT: a reload that lost to another runtime's record of the same code looked for that
     * record in its view, did not find it yet, and failed).
     */
    CodeStore.State latest() {
        return latest;
    }

    /**
     * The record that won, when its active generation is {@code mine}'s code from the manifest (the same sha256 and
     * handler), recorded by another runtime starting on or reloading the same manifest; empty otherwise.
     */
    Optional<CodeStore.State> recordedByAnother(GenerationRecord mine) {
        if (mine.source() != GenerationRecord.Source.MANIFEST) {
            return Optional.empty();
        }
        return latest.generation(latest.active())
                .filter(g -> g.isManifestCode(mine.sha256(), mine.handler()))
                .map(g -> latest);
    }

    private static String message(String subscription, FleetRecords.Desired latest, Optional<CodeStore.State> basis) {
        CodeStore.State now = latest.state();
        String active = now.generation(now.active())
                .map(g -> "generation " + g.number() + " (sha256 " + g.shortSha() + ", "
                        + g.source().label() + ")")
                .orElse("generation " + now.active());
        return "subscription '" + subscription + "': lost to " + active + ramp(now) + ", written by " + latest.by()
                + " at "
                + latest.at() + " while this change was made from "
                + basis.map(state ->
                                "generation " + state.active() + " (highest " + state.highest() + ")" + ramp(state))
                        .orElse("no record")
                + "; nothing of this change was stored: look at the status, then deploy or roll back again";
    }

    /** ", ramp generation 2 on 25% of keys (...) running since ..." or "". */
    private static String ramp(CodeStore.State state) {
        return state.ramp()
                .map(r -> ", ramp " + r.describe() + " " + r.status().name().toLowerCase(java.util.Locale.ROOT)
                        + " since " + r.stepStartedAt())
                .orElse("");
    }
}
