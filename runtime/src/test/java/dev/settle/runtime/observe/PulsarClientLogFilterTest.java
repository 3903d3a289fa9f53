package dev.settle.runtime.observe;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.core.spi.FilterReply;
import java.net.ConnectException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class PulsarClientLogFilterTest {
    private final AtomicLong now = new AtomicLong(1_000);
    private final PulsarClientLogFilter filter = new PulsarClientLogFilter(now::get);
    private final LoggerContext context = new LoggerContext();
    private final Logger client = context.getLogger("org.apache.pulsar.client.impl.ConnectionPool");
    private final Logger settle = context.getLogger("dev.settle.runtime.Settle");

    private FilterReply warn(Logger logger, String format, Object... params) {
        return filter.decide(null, logger, Level.WARN, format, params, null);
    }

    @Test
    void aRepeatedClientWarningPassesOnceEveryThirtySeconds() {
        assertThat(warn(client, "Failed to open connection to {}", "broker:6650"))
                .isEqualTo(FilterReply.NEUTRAL);
        assertThat(warn(client, "Failed to open connection to {}", "broker:6650"))
                .isEqualTo(FilterReply.DENY);
        now.addAndGet(TimeUnit.SECONDS.toNanos(29));
        assertThat(warn(client, "Failed to open connection to {}", "other:6650"))
                .isEqualTo(FilterReply.DENY);
        assertThat(warn(client, "Another warning {}", "x")).isEqualTo(FilterReply.NEUTRAL);
        now.addAndGet(TimeUnit.SECONDS.toNanos(1));
        assertThat(warn(client, "Failed to open connection to {}", "broker:6650"))
                .isEqualTo(FilterReply.NEUTRAL);
    }

    @Test
    void aClientWarningWithAStackTraceIsSaidOnOneLineInstead() {
        assertThat(warn(
                        client,
                        "Failed to get partitioned topic metadata for {}",
                        "t",
                        new IllegalStateException("lookup", new ConnectException("Connection refused"))))
                .isEqualTo(FilterReply.DENY);
    }

    @Test
    void theClientsErrorsWhileTheTransactionsClientIsBuiltAreLeftOut() throws Exception {
        FilterReply[] replies = new FilterReply[2];
        Thread building = new Thread(
                () -> {
                    replies[0] = filter.decide(
                            null, client, Level.ERROR, "Start transactionCoordinatorClient error.", null, null);
                    replies[1] = filter.decide(null, settle, Level.ERROR, "cannot begin transactions", null, null);
                },
                PulsarClientLogFilter.TRANSACTIONS_THREAD);
        building.start();
        building.join();

        assertThat(replies[0]).as("the client's error").isEqualTo(FilterReply.DENY);
        assertThat(replies[1]).as("Settle's own line").isEqualTo(FilterReply.NEUTRAL);
    }

    @Test
    void errorsAndSettlesOwnWarningsAlwaysPass() {
        assertThat(filter.decide(null, client, Level.ERROR, "broken", null, null))
                .isEqualTo(FilterReply.NEUTRAL);
        assertThat(filter.decide(null, client, Level.ERROR, "broken", null, null))
                .isEqualTo(FilterReply.NEUTRAL);
        assertThat(warn(settle, "subscription '{}': cannot subscribe yet", "orders"))
                .isEqualTo(FilterReply.NEUTRAL);
        assertThat(warn(settle, "subscription '{}': cannot subscribe yet", "orders"))
                .isEqualTo(FilterReply.NEUTRAL);
    }

    /**
     * A send into a transaction another delivery of it aborted (exactly-once commit batching) makes the client log an
     * error with its stack: said once every 30 s on one line instead, as a warning is.
     */
    @Test
    void theClientsErrorsOfSendsIntoAnAbortedTransactionAreSaidLikeWarnings() {
        Logger transaction = context.getLogger("org.apache.pulsar.client.impl.transaction.TransactionImpl");
        String format = "The transaction [{}] get an exception when send messages.";
        IllegalStateException aborting = new IllegalStateException("unexpected state : ABORTING, expect OPEN state!");

        assertThat(filter.decide(null, transaction, Level.ERROR, format, new Object[] {"0:1"}, aborting))
                .isEqualTo(FilterReply.DENY);
        assertThat(filter.decide(null, transaction, Level.ERROR, format, new Object[] {"0:2"}, aborting))
                .isEqualTo(FilterReply.DENY);
        assertThat(filter.decide(null, transaction, Level.ERROR, format, new Object[] {"0:3"}, null))
                .as("within 30 s of the first")
                .isEqualTo(FilterReply.DENY);
        now.addAndGet(TimeUnit.SECONDS.toNanos(30));
        assertThat(filter.decide(null, transaction, Level.ERROR, format, new Object[] {"0:4"}, null))
                .isEqualTo(FilterReply.NEUTRAL);
    }
}
