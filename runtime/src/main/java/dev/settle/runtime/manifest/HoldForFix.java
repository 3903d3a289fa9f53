package dev.settle.runtime.manifest;

import java.util.Objects;

/**
 * A subscription's {@code onCap: hold} (docs/dead-letters.md, "Hold for a fix"): a message that exhausts its attempts
 * goes to {@link #topic} instead of the dead-letter topic, tagged with the code that failed it, and is sent back to
 * its topic once another generation of the code serves every key.
 *
 * @param topic {@code <subscription>-held} in the dead-letter topic's namespace, fully qualified
 * @param redrivePerSecond how many held messages a re-drive sends back a second at most, at least 1
 */
public record HoldForFix(String topic, int redrivePerSecond) {
    /** {@code redriveRate}: a backlog of 10 000 held messages goes back in under two minutes, without a burst. */
    public static final int DEFAULT_REDRIVE_PER_SECOND = 100;

    /**
     * The held topic's durable subscription, created with the topic so held messages are kept, through which the
     * re-drive reads them.
     */
    public static final String REDRIVE_SUBSCRIPTION = "settle-redrive";

    public HoldForFix {
        Objects.requireNonNull(topic, "topic");
        if (redrivePerSecond < 1) {
            throw new IllegalArgumentException("redrivePerSecond below 1: " + redrivePerSecond);
        }
    }

    /**
     * The held topic of {@code subscription} whose dead-letter topic is {@code deadLetterTopic} (fully qualified):
     * {@code <subscription>-held} beside it, so it has the dead-letter topic's namespace, and its permissions.
     */
    public static String topicFor(String deadLetterTopic, String subscription) {
        return deadLetterTopic.substring(0, deadLetterTopic.lastIndexOf('/') + 1) + subscription + "-held";
    }
}
