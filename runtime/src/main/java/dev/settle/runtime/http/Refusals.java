package dev.settle.runtime.http;

import java.net.InetAddress;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * Counts and logs the requests one port refused, so that an attack on it leaves a trace: every refusal is counted
 * (the owner's metric, by reason), and logged at most once a {@link #LOG_EVERY}: the first at once, then the sum of
 * those since, written with the next refusal after the interval. A flood therefore writes one line a minute, not one
 * a request.
 *
 * <p>Thread-safe.
 */
public final class Refusals {
    static final Duration LOG_EVERY = Duration.ofMinutes(1);

    /** Why a request was refused; {@link #label()} is the metric's {@code reason}. */
    public enum Reason {
        /** No bearer token at all: 401. */
        UNAUTHENTICATED,
        /** A token that is not the right one: 401. */
        WRONG_TOKEN,
        /** Too many wrong tokens from this peer lately: 429. */
        THROTTLED,
        /** A head or path that cannot be parsed (400), or a head over the size limit (431). */
        MALFORMED,
        /** A head not complete by its deadline, or dropped to make room for newer connections: no answer. */
        TOO_SLOW,
        /** Every worker busy and the queue full: 503. */
        BUSY;

        /** The metric's label: the name in lower case. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final String port;
    private final Logger log;
    private final Consumer<Reason> count;
    private final LongSupplier nanoTime;
    private final Map<Reason, Long> since = new EnumMap<>(Reason.class);
    private boolean loggedOnce;
    private long loggedAt;

    /**
     * @param port the port's name in log lines ({@code http}, {@code admin})
     * @param count adds one to the metric for a reason
     */
    public Refusals(String port, Logger log, Consumer<Reason> count) {
        this(port, log, count, System::nanoTime);
    }

    Refusals(String port, Logger log, Consumer<Reason> count, LongSupplier nanoTime) {
        this.port = port;
        this.log = log;
        this.count = count;
        this.nanoTime = nanoTime;
    }

    /** Counts one refusal of a request from {@code peer} (null when unknown), and logs if a line is due. */
    public void refused(Reason reason, InetAddress peer) {
        count.accept(reason);
        String line;
        synchronized (this) {
            since.merge(reason, 1L, Long::sum);
            long now = nanoTime.getAsLong();
            if (loggedOnce && now - loggedAt < LOG_EVERY.toNanos()) {
                return;
            }
            line = loggedOnce ? summary(now, peer) : first(reason, peer);
            loggedOnce = true;
            loggedAt = now;
            since.clear();
        }
        log.warn(line);
    }

    private String first(Reason reason, InetAddress peer) {
        return port + ": refused a request from " + address(peer) + " (" + reason.label() + "); further refusals on"
                + " this port are summed up here at most once a minute and counted in settle_http_refused_total";
    }

    private String summary(long now, InetAddress peer) {
        long total = since.values().stream().mapToLong(Long::longValue).sum();
        StringJoiner reasons = new StringJoiner(", ");
        since.forEach((reason, count) -> reasons.add(reason.label() + " " + count));
        return port + ": refused " + total + " requests in the last "
                + Duration.ofNanos(now - loggedAt).toSeconds() + " s (" + reasons + "), the last from "
                + address(peer);
    }

    private static String address(InetAddress peer) {
        return peer == null ? "an unknown address" : peer.getHostAddress();
    }
}
