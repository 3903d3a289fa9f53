package dev.settle.runtime.preflight;

/** What one check of the broker found. */
public enum Verdict {
    /** The broker provides what the promise needs. */
    OK("ok"),
    /** It does not: the detail names the setting and what to do. */
    FAILED("failed"),
    /** What the check needs could not be read: the detail names the permission or the setting. */
    COULD_NOT_CHECK("could-not-check");

    private final String label;

    Verdict(String label) {
        this.label = label;
    }

    /** As printed: {@code ok}, {@code failed} or {@code could-not-check}. */
    public String label() {
        return label;
    }
}
