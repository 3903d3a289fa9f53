package dev.settle.runtime.manifest;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The admin API that accepts handler JARs while the runtime runs (docs/live-code.md). Off unless the manifest has
 * an {@code admin:} section; then a token is required.
 *
 * @param bindAddress the address to bind, {@code 127.0.0.1} by default: code upload is not for the network unless
 *     the manifest says so
 * @param port the port, its own (never the {@code http} one), 8081 by default; 0 picks a free one
 * @param token the bearer token every request must carry
 * @param dataDir where uploaded JARs and each subscription's generations are kept, absolute
 * @param maxJarSize the largest JAR accepted, in bytes; a larger upload is refused before it is read
 * @param retiredLoaderCheck how long after a swap a retired handler's class loader may stay reachable before the
 *     threads that pin it are logged
 * @param codeStore where generations are kept: this pod's {@code dataDir} or Pulsar (docs/live-code.md)
 * @param codeNamespace with {@link CodeStore#PULSAR}: the {@code tenant/namespace} of the packages and the records
 */
public record AdminSettings(
        String bindAddress,
        int port,
        Secret token,
        Path dataDir,
        long maxJarSize,
        Duration retiredLoaderCheck,
        CodeStore codeStore,
        Optional<String> codeNamespace) {
    /** Where a subscription's generations are kept. */
    public enum CodeStore {
        /** In {@code dataDir}, on this pod: for a lone runtime (the default). */
        DISK,
        /** As Pulsar packages, with a record every runtime of the deployment reads: for any number of replicas. */
        PULSAR
    }

    public static final String DEFAULT_BIND_ADDRESS = "127.0.0.1";
    public static final int DEFAULT_PORT = 8081;
    /** 100 MiB: a shaded handler with its libraries is tens of MiB. */
    public static final long DEFAULT_MAX_JAR_SIZE = 100L * 1024 * 1024;

    /**
     * The shortest token accepted: the token runs code as the runtime (docs/security.md), so it must not be
     * guessable; 32 characters, as {@code openssl rand -hex 16} prints and well under {@code -hex 32}.
     */
    public static final int MIN_TOKEN_LENGTH = 32;

    /**
     * The fewest different characters a token may have: a long token of one letter repeated (accepted before issue
     * 40) is guessed at once. A random token passes with room to spare: 32 hex digits, as {@code openssl rand -hex 16}
     * prints, have about 14 different ones, and fewer than 8 in none of 200 000 drawn.
     */
    public static final int MIN_TOKEN_DISTINCT_CHARACTERS = 8;

    /**
     * Why {@code token} is too weak to be the admin token, or empty when it is not: shorter than {@link
     * #MIN_TOKEN_LENGTH}, or fewer than {@link #MIN_TOKEN_DISTINCT_CHARACTERS} different characters. Never quotes the
     * token, nor says how it starts.
     */
    public static Optional<String> tokenWeakness(String token) {
        int length = token.length();
        if (length < MIN_TOKEN_LENGTH) {
            return Optional.of("is " + length + " characters, must be at least " + MIN_TOKEN_LENGTH
                    + ": the token lets its holder run code as the runtime (docs/security.md); make one with"
                    + " 'openssl rand -hex 32'");
        }
        long distinct = token.codePoints().distinct().count();
        if (distinct < MIN_TOKEN_DISTINCT_CHARACTERS) {
            return Optional.of("has " + distinct + " different characters, must have at least "
                    + MIN_TOKEN_DISTINCT_CHARACTERS + ": a token of low variety, such as one letter repeated, is"
                    + " guessed at once, and the token lets its holder run code as the runtime (docs/security.md);"
                    + " make one with 'openssl rand -hex 32'");
        }
        return Optional.empty();
    }

    public static final Duration DEFAULT_RETIRED_LOADER_CHECK = Duration.ofSeconds(60);

    public AdminSettings {
        Objects.requireNonNull(bindAddress, "bindAddress");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(dataDir, "dataDir");
        Objects.requireNonNull(retiredLoaderCheck, "retiredLoaderCheck");
        Objects.requireNonNull(codeStore, "codeStore");
        Objects.requireNonNull(codeNamespace, "codeNamespace");
    }
}
