package dev.settle.runtime.driver;

import dev.settle.sdk.Outcome;
import java.util.Objects;

/**
 * What one call of a batch handler says about one of its deliveries: an outcome (the one a handler of one message
 * would have returned), no outcome because the handler's result left the delivery out, or a failure (its payload could
 * not be decoded, the result was refused, or the delivery was called alone and the call threw).
 *
 * @param outcome the outcome, or {@code null} for none
 * @param missing whether the handler's result left the delivery out (its outcome is then none)
 * @param failure what failed, or {@code null}
 */
record BatchAnswer(Outcome outcome, boolean missing, Throwable failure) {
    private static final BatchAnswer MISSING = new BatchAnswer(null, true, null);

    static BatchAnswer of(Outcome outcome) {
        return new BatchAnswer(Objects.requireNonNull(outcome, "outcome"), false, null);
    }

    /** The result left the delivery out: no outcome, as a handler of one message returning {@code null}. */
    static BatchAnswer none() {
        return MISSING;
    }

    static BatchAnswer failed(Throwable failure) {
        return new BatchAnswer(null, false, Objects.requireNonNull(failure, "failure"));
    }
}
