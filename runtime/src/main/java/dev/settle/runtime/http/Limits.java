package dev.settle.runtime.http;

import java.time.Duration;

/**
 * What one server allows a client.
 *
 * @param headDeadline time from accepting a connection to the end of its request head; a client slower than this,
 *     or silent, is disconnected without holding a worker
 * @param maxHeadBytes the request line and headers together
 * @param maxPending connections still sending their head; the oldest is dropped to make room for a new one
 * @param workers requests handled at once
 * @param queued complete requests waiting for a worker; one more is answered 503 at once
 * @param idleTimeout the longest wait for the next byte of a body, or for the client to take the answer's next bytes
 * @param probeWorkers requests for the probe paths handled at once, on threads of their own: no other request can
 *     make a probe wait (used only when the server is given probe paths)
 * @param probeQueued probe requests waiting for a probe worker; one more is answered 503 at once
 * @param unreadBodyLongest the longest an answer waits while what a handler left of the body is read away, however
 *     fast its bytes come ({@link UnreadBody})
 */
public record Limits(
        Duration headDeadline,
        int maxHeadBytes,
        int maxPending,
        int workers,
        int queued,
        Duration idleTimeout,
        int probeWorkers,
        int probeQueued,
        Duration unreadBodyLongest) {

    /** The default {@link #unreadBodyLongest()}: a slow upload refused still reads its refusal. */
    static final Duration UNREAD_BODY_LONGEST = Duration.ofSeconds(10);

    public Limits {
        if (workers < 1 || probeWorkers < 1 || queued < 1 || probeQueued < 1 || maxPending < 1) {
            throw new IllegalArgumentException("every pool needs a thread and a queue slot: " + workers + ", " + queued
                    + ", " + probeWorkers + ", " + probeQueued + ", " + maxPending);
        }
        if (headDeadline.compareTo(idleTimeout) >= 0) {
            // Jetty's idle timeout would close a silent connection first, uncounted and unlogged as too slow.
            throw new IllegalArgumentException("the head deadline (" + headDeadline
                    + ") must be shorter than the idle timeout (" + idleTimeout + ")");
        }
        if (unreadBodyLongest.isNegative() || unreadBodyLongest.isZero()) {
            throw new IllegalArgumentException(
                    "the longest wait for an unread body must be positive: " + unreadBodyLongest);
        }
    }

    /** Limits with one probe worker, eight probe queue slots and the default wait for an unread body. */
    public Limits(
            Duration headDeadline, int maxHeadBytes, int maxPending, int workers, int queued, Duration idleTimeout) {
        this(headDeadline, maxHeadBytes, maxPending, workers, queued, idleTimeout, 1, 8, UNREAD_BODY_LONGEST);
    }

    /**
     * The probe and metrics port: answers are computed at once, so a few workers are plenty; {@code /livez} and
     * {@code /readyz} have two of their own, so that slow scrapes or a flood of other requests never delay them.
     */
    public static Limits probes() {
        return new Limits(
                Duration.ofSeconds(5), 16 * 1024, 256, 4, 32, Duration.ofSeconds(10), 2, 32, UNREAD_BODY_LONGEST);
    }

    /** The admin API: an upload holds its worker while its swap waits; status requests get the others. */
    public static Limits admin() {
        return new Limits(Duration.ofSeconds(10), 16 * 1024, 64, 4, 8, Duration.ofSeconds(30));
    }
}
