package dev.settle.runtime.live;

import java.util.List;

/**
 * A deploy or rollback that did not happen: every problem found, each a sentence saying what to do. The running
 * generation is untouched.
 */
public final class SwapRefusedException extends Exception {
    private static final long serialVersionUID = 1L;

    /** Why, as the admin API answers it. */
    public enum Reason {
        /** The JAR or its handler is refused (HTTP 400). */
        INVALID,
        /** There is nothing to go back to, or what there was is gone (HTTP 409). */
        CONFLICT
    }

    private final Reason reason;
    private final List<String> problems;

    SwapRefusedException(Reason reason, List<String> problems) {
        super(String.join("; ", problems));
        this.reason = reason;
        this.problems = List.copyOf(problems);
    }

    /**
     * {@code what} (a deploy, another canary) refused (409) while {@code subscription} runs the canary ramp
     * {@code running}: promoted or aborted {@code where} first.
     */
    static SwapRefusedException duringRamp(String subscription, Ramp running, String what, String where) {
        return new SwapRefusedException(
                Reason.CONFLICT,
                List.of("subscription '" + subscription + "' runs a canary ramp of " + running.describe() + "; " + what
                        + " is refused until it ends: promote it (settle deploy --promote) or abort it (settle deploy"
                        + " --abort)" + where + " first"));
    }

    public Reason reason() {
        return reason;
    }

    public List<String> problems() {
        return problems;
    }
}
