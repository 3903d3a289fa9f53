package dev.settle.runtime.cli;

import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.FailureBackoff;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What happens to a message that keeps failing, in words: the waits between its attempts, then the dead letters
 * or "forever". The waits are those the settlement applies: none after the last attempt, none shorter than
 * nothing, and each ending before the ack timeout.
 */
final class FailureSchedule {
    /** Waits listed before a schedule without a cap is summed up as "then every max". */
    private static final int LISTED = 8;

    private FailureSchedule() {}

    static String describe(SubscriptionSpec spec) {
        Optional<FailureBackoff> backoff = spec.retries().failureBackoff();
        Optional<Duration> ackTimeout = spec.consumer().ackTimeout();
        if (backoff.isEmpty()) {
            return "redelivered at once"
                    + spec.deadLetter()
                            .map(dlq -> ", " + dlq.maxAttempts() + " attempts, then dead letter")
                            .orElse(", forever");
        }
        if (!spec.type().countsRedeliveries()) {
            Duration wait = backoff.get().initial();
            return DurationText.format(ackTimeout
                            .filter(timeout -> timeout.compareTo(wait) < 0)
                            .orElse(wait))
                    + " every time, forever (" + spec.type().manifestName() + " keeps no redelivery count, so the"
                    + " backoff cannot grow)";
        }
        List<String> waits = new ArrayList<>();
        int waitsBeforeEnd = spec.deadLetter().map(dlq -> dlq.maxAttempts() - 1).orElse(LISTED);
        boolean capped = false;
        for (int attempt = 1; attempt <= waitsBeforeEnd; attempt++) {
            Duration wait = backoff.get().delayAfter(attempt);
            if (ackTimeout.isPresent() && wait.compareTo(ackTimeout.get()) >= 0) {
                wait = ackTimeout.get();
                capped = true;
            }
            waits.add(DurationText.format(wait));
            if (spec.deadLetter().isEmpty()
                    && (capped || wait.equals(backoff.get().max()))) {
                break;
            }
        }
        String longest = DurationText.format(ackTimeout
                .filter(timeout -> timeout.compareTo(backoff.get().max()) < 0)
                .orElse(backoff.get().max()));
        String end = spec.deadLetter().isPresent()
                ? ", then dead letter"
                : (waits.get(waits.size() - 1).equals(longest) ? "" : ", ... up to " + longest) + ", then every "
                        + longest + ", forever";
        return String.join(", ", waits) + end + (capped ? " (each wait ends before the ack timeout)" : "");
    }
}
