package dev.settle.runtime.journal;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.apache.pulsar.client.api.MessageId;

/**
 * A record being made on a settling thread, one per thread and reused: {@link SubscriptionJournal} fills it and the
 * {@link JournalWriter} encodes it into the open body at once ({@link JournalBatch.Body#write(Draft)}), so a settlement
 * allocates no record, no message-id text and no hex. The fields are {@link JournalRecord}'s, but for these.
 */
final class Draft {
    long at;
    String subscription;
    String topic;
    /** Written as its numbers when Pulsar's own kind, else as {@link #messageIdText}. */
    MessageId messageId;
    /** The id's text when it is not one of Pulsar's kinds that print as numbers; null otherwise. */
    String messageIdText;
    /** The origin id the message carries; null when its story goes by its own {@code topic@messageId}. */
    String origin;

    String key;
    int attempt;
    String code;
    int generation;
    String instance;
    String outcome;
    String deadLetterTopic;
    String failureStage;
    String causeClass;
    long handlingMicros;
    String traceId;
    /** Whether {@link #sha256} holds the payload's SHA-256: a record of a call's beginning has none. */
    boolean hasSha256;
    /** The payload's SHA-256. */
    final byte[] sha256 = new byte[JournalBatch.SHA_256_BYTES];
    /**
     * The thread's digest, kept with its draft: one thread-local lookup a settlement, and looking SHA-256 up per
     * message cost more than hashing a small payload.
     */
    final MessageDigest digest = sha256();

    String transaction;

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException("every Java runtime has SHA-256", impossible);
        }
    }
}
