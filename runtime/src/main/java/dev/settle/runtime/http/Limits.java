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
 */
public record Limits(
        Duration headDeadline, int maxHeadBytes, int maxPending, int workers, int queued, Duration idleTimeout) {

    /** The probe and metrics port: answers are computed at once, so a few workers are plenty. */
    public static Limits probes() {
        return new Limits(Duration.ofSeconds(5), 16 * 1024, 256, 4, 32, Duration.ofSeconds(10));
    }

    /** The admin API: an upload holds its worker while its swap waits; status requests get the others. */
    public static Limits admin() {
        return new Limits(Duration.ofSeconds(10), 16 * 1024, 64, 4, 8, Duration.ofSeconds(30));
    }
}
