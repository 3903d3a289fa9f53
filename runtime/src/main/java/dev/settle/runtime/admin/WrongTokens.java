package dev.settle.runtime.admin;

import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Holds back a peer that sends wrong admin tokens: each peer address has a bucket of {@link #BURST} wrong tokens,
 * refilled one per {@link #REFILL} seconds; while its bucket is empty, its wrong tokens are answered 429. Only a
 * wrong token spends a bucket: a request without a token spends nothing, and the right token is compared first and
 * never held back (issue 40: one bucket for the port let an unauthenticated peer make the operator's right token get
 * 429). So the throttle does not slow guessing itself, the right token is answered at once even from a throttled
 * peer; the token's length does that (at least 32 characters). What the throttle bounds is the answers, log lines
 * and work a wrong-token peer gets out of the port. Behind a proxy every client has the proxy's address and shares
 * its bucket.
 *
 * <p>Remembers the {@link #PEERS} peers that sent a wrong token last; an older one starts again with a full bucket.
 * Thread-safe.
 */
final class WrongTokens {
    static final int BURST = 10;
    static final long REFILL = 1;
    static final int PEERS = 4096;

    private final LongSupplier nanoTime;
    private final Map<InetAddress, Bucket> buckets = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<InetAddress, Bucket> eldest) {
            return size() > PEERS;
        }
    };

    WrongTokens(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    /** Whether {@code peer}'s wrong token is answered 401 now; if not, the seconds to wait, at least 1. */
    synchronized long secondsToWait(InetAddress peer) {
        Bucket bucket = buckets.get(peer);
        if (bucket == null) {
            return 0;
        }
        bucket.refill(nanoTime.getAsLong());
        if (bucket.available >= 1) {
            return 0;
        }
        return Math.max(1, (long) Math.ceil((1 - bucket.available) * REFILL));
    }

    /** A token from {@code peer} compared and found wrong. */
    synchronized void wrong(InetAddress peer) {
        long now = nanoTime.getAsLong();
        Bucket bucket = buckets.computeIfAbsent(peer, unused -> new Bucket(now));
        bucket.refill(now);
        bucket.available = Math.max(0, bucket.available - 1);
    }

    private static final class Bucket {
        double available = BURST;
        long updated;

        Bucket(long now) {
            this.updated = now;
        }

        void refill(long now) {
            double seconds = (now - updated) / (double) TimeUnit.SECONDS.toNanos(1);
            available = Math.min(BURST, available + seconds / REFILL);
            updated = now;
        }
    }
}
