package dev.settle.runtime.live;

import dev.settle.runtime.canary.Judge;
import dev.settle.runtime.canary.Outcomes;
import java.util.Optional;

/**
 * A subscription's canary ramp as {@code settle status} shows it (docs/live-code.md, "Canary ramps"): the ramp as
 * recorded, both generations' counts in the step's window side by side, and the last judgement (empty before the
 * first, and for a ramp that ended).
 */
public record RampStatus(
        Ramp ramp,
        Outcomes.Snapshot canary,
        Outcomes.Snapshot current,
        Optional<Judge.Judgement> last,
        int currentGeneration) {}
