package dev.settle.runtime.manifest;

/** Where a new subscription starts reading: {@code earliest} or {@code latest}. */
public enum InitialPosition {
    EARLIEST,
    LATEST
}
