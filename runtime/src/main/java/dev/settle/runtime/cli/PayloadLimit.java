package dev.settle.runtime.cli;

import picocli.CommandLine.Option;

/** {@code --max-bytes}, for the commands that print messages: how much of each payload they show. */
final class PayloadLimit {
    @Option(
            names = "--max-bytes",
            paramLabel = "N",
            defaultValue = "1024",
            description = "show at most N bytes of each payload (default: ${DEFAULT-VALUE})")
    int maxBytes;

    /** Whether the value given can be used (it must be at least 1). */
    boolean valid() {
        return maxBytes >= 1;
    }

    /** {@code payload} as {@link SafePayload} shows it, cut at {@code --max-bytes}. */
    String show(byte[] payload) {
        return SafePayload.show(payload, maxBytes);
    }
}
