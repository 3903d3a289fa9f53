package dev.settle.runtime.observe;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;
import org.slf4j.helpers.MessageFormatter;

/**
 * Keeps the Pulsar client from flooding the log while the broker is away. Unreachable, the client warns several
 * times a second (every connection attempt, every lookup retry), many of them with a stack trace. Settle says
 * itself what it waits for (a line every 30 s, {@code /readyz}, {@code settle_consumer_connected}), so each of the
 * client's warnings (by logger and message template) is let through once every {@link #INTERVAL_NANOS}, as one
 * line: a stack trace is cut to the exception's own words. Errors pass, but for those of building the transactions'
 * client ({@link #TRANSACTIONS_THREAD}) and those of sends into an aborted transaction, treated as warnings. Installed by logback.xml.
 */
public final class PulsarClientLogFilter extends TurboFilter {
    static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(30);
    /**
     * The thread that builds the client of exactly-once subscriptions' transactions, and says itself, in one line,
     * why it cannot (the runtime's {@code TransactionClient}).
     */
    public static final String TRANSACTIONS_THREAD = "settle-transactions";

    private static final String CLIENT = "org.apache.pulsar";
    /**
     * Logs an error, with its stack, for each send into a transaction that is aborted already. Deliveries that share a
     * transaction still send while another of them aborts it (exactly-once commit batching); Settle reports what
     * becomes of each, so these are let through as the client's warnings are.
     */
    private static final String TRANSACTION = "org.apache.pulsar.client.impl.transaction.TransactionImpl";

    private static final org.slf4j.Logger summary = LoggerFactory.getLogger("dev.settle.runtime.pulsar-client");

    private final Map<String, Long> lastLetThrough = new ConcurrentHashMap<>();
    private final LongSupplier nanoTime;

    public PulsarClientLogFilter() {
        this(System::nanoTime);
    }

    PulsarClientLogFilter(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    @Override
    public FilterReply decide(
            Marker marker, Logger logger, Level level, String format, Object[] params, Throwable thrown) {
        // The effective level, not isEnabledFor: that one asks the turbo filters, this one among them. Logback asks
        // this filter on every isDebugEnabled() of every logger, which the client and Netty call several times per
        // message: the level (two int comparisons) goes first, the name only for what would be logged.
        if (logger == null || level == null || !level.isGreaterOrEqual(logger.getEffectiveLevel())) {
            return FilterReply.NEUTRAL;
        }
        if (level.isGreaterOrEqual(Level.ERROR) && !TRANSACTION.equals(logger.getName())) {
            // Errors pass, but for those of building the transactions' client: a cluster without a transaction
            // coordinator makes the build log two errors with their stacks, and Settle says it in one line itself.
            return TRANSACTIONS_THREAD.equals(Thread.currentThread().getName())
                            && logger.getName().startsWith(CLIENT)
                    ? FilterReply.DENY
                    : FilterReply.NEUTRAL;
        }
        if (!logger.getName().startsWith(CLIENT)) {
            return FilterReply.NEUTRAL;
        }
        String key = logger.getName() + '|' + format;
        long now = nanoTime.getAsLong();
        Long last = lastLetThrough.get(key);
        if (last != null && now - last < INTERVAL_NANOS) {
            return FilterReply.DENY;
        }
        lastLetThrough.put(key, now);
        Throwable throwable = thrown != null ? thrown : MessageFormatter.getThrowableCandidate(params);
        if (throwable == null) {
            return FilterReply.NEUTRAL;
        }
        // The same words on one line under a logger of our own (so this filter does not see them again).
        summary.warn(
                "{} - {}: {} (once every 30 s at most; the client's stack trace left out)",
                logger.getName(),
                MessageFormatter.arrayFormat(format, params).getMessage(),
                rootCause(throwable));
        return FilterReply.DENY;
    }

    private static String rootCause(Throwable throwable) {
        Throwable cause = throwable;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return cause.toString();
    }
}
