package dev.settle.runtime.manifest;

import java.time.Duration;

/** Every manifest default, in one place; the README's manifest reference repeats them. */
public final class Defaults {
    /** {@code type}: Shared, the type on which the redelivery count (and so the dead-letter cap) works. */
    public static final SubscriptionKind TYPE = SubscriptionKind.SHARED;
    /** {@code concurrency}: one handler call at a time. */
    public static final int CONCURRENCY = 1;
    /** {@code receiverQueueSize}: the Pulsar client's own default. */
    public static final int RECEIVER_QUEUE_SIZE = 1000;
    /**
     * {@code initialPosition}: earliest, so that messages published before a new subscription's first start
     * are handled, not skipped (Pulsar's own default is latest).
     */
    public static final InitialPosition INITIAL_POSITION = InitialPosition.EARLIEST;
    /** {@code handlerTimeout}: a call running longer than this makes {@code /livez} fail. */
    public static final Duration HANDLER_TIMEOUT = Duration.ofSeconds(60);
    /** {@code batchIndexAck}: off, as on a broker with its default settings. */
    public static final boolean BATCH_INDEX_ACK = false;
    /** {@code http.port}. */
    public static final int HTTP_PORT = 8080;
    /** {@code http.bindAddress}. */
    public static final String HTTP_BIND_ADDRESS = "0.0.0.0";
    /** How long in-flight handler calls may run on after a stop is asked for. */
    public static final Duration DRAIN_GRACE = Duration.ofSeconds(20);
    /** The Pulsar client's floor for an ack timeout. */
    public static final Duration MIN_ACK_TIMEOUT = Duration.ofSeconds(1);

    private Defaults() {}

    /** {@code deadLetterSubscription}: {@code <subscription>-dlq}. */
    public static String deadLetterSubscription(String subscription) {
        return subscription + "-dlq";
    }
}
