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

    /** The generation the store's record makes active now, which won. */
    private final int winner;

    GenerationConflictException(String subscription, FleetRecords.Desired latest, Optional<CodeStore.State> basis) {
        super(message(subscription, latest, basis));
        this.winner = latest.state().active();
    }

    int winner() {
        return winner;
    }

    private static String message(String subscription, FleetRecords.Desired latest, Optional<CodeStore.State> basis) {
        CodeStore.State now = latest.state();
        String active = now.generation(now.active())
                .map(g -> "generation " + g.number() + " (sha256 " + g.shortSha() + ", "
                        + g.source().label() + ")")
                .orElse("generation " + now.active());
        return "subscription '" + subscription + "': lost to " + active + ", written by " + latest.by() + " at "
                + latest.at() + " while this change was made from "
                + basis.map(state -> "generation " + state.active() + " (highest " + state.highest() + ")")
                        .orElse("no record")
                + "; nothing of this change was stored: look at the status, then deploy or roll back again";
    }
}
