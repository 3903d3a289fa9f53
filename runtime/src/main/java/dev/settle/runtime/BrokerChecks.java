package dev.settle.runtime;

import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.preflight.BrokerPreflight;
import dev.settle.runtime.preflight.Check;
import dev.settle.runtime.preflight.PreflightReport;
import dev.settle.runtime.preflight.Verdict;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.PulsarClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker preflight of {@code settle run} (docs/preflight.md): run in the background at start and after every
 * reload, before a subscription subscribes. A subscription whose promises cannot hold on this broker stays unready,
 * {@code /readyz} saying why, and the checks are asked again every {@link #AGAIN} until the broker is fixed; the
 * process never exits for it. A broker that cannot be reached makes its checks could-not-check, and the
 * subscriptions then wait for it as they always do.
 */
final class BrokerChecks implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BrokerChecks.class);
    static final Duration AGAIN = Duration.ofSeconds(30);
    private static final String PENDING = "asking the broker whether this subscription's promises can hold (preflight)";

    private final Supplier<PulsarClient> client;
    private final Time time;
    /** Null while a preflight runs: subscriptions wait for it. */
    private volatile PreflightReport report;
    /** Guarded by this: bumped by every new manifest, so an older run's report never replaces a newer one's. */
    private long round;

    private volatile boolean closed;

    BrokerChecks(Supplier<PulsarClient> client, Time time) {
        this.client = client;
        this.time = time;
    }

    /** Checks {@code checked} in the background; until done, every subscription not yet subscribed waits. */
    synchronized void check(Manifest checked) {
        if (closed) {
            return;
        }
        report = null;
        long mine = ++round;
        Thread thread = new Thread(() -> runUntilHolding(checked, mine), "settle-preflight");
        thread.setDaemon(true);
        thread.start();
    }

    /** Until the next {@link #check}, every subscription not yet subscribed waits; an older run's report is dropped. */
    synchronized void pause() {
        report = null;
        round++;
    }

    /** Why a subscription may not subscribe yet; empty once its checks refuse nothing. */
    Optional<String> notReady(String subscription) {
        PreflightReport current = report;
        return current == null ? Optional.of(PENDING) : current.refusalOf(subscription);
    }

    private void runUntilHolding(Manifest checked, long mine) {
        String lastLogged = null;
        while (!closed) {
            PreflightReport found = runOnce(checked);
            synchronized (this) {
                if (mine != round) {
                    return;
                }
                report = found;
            }
            if (!found.text().equals(lastLogged)) {
                log(found);
                lastLogged = found.text();
            }
            if (!found.refuses()) {
                return;
            }
            try {
                time.await(() -> closed || mine != currentRound(), AGAIN);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private synchronized long currentRound() {
        return round;
    }

    private PreflightReport runOnce(Manifest checked) {
        try {
            return BrokerPreflight.of(checked, client.get()).run();
        } catch (Exception e) {
            // A token file that cannot be read, or a bug of ours: it must not keep a subscription from running.
            log.warn(
                    "preflight: the broker could not be checked ({}); the subscriptions start unchecked", e.toString());
            return new PreflightReport(List.of());
        }
    }

    private static void log(PreflightReport found) {
        long failed = found.checks().stream()
                .filter(c -> c.verdict() == Verdict.FAILED)
                .count();
        long unchecked = found.checks().stream()
                .filter(c -> c.verdict() == Verdict.COULD_NOT_CHECK)
                .count();
        log.info(
                "preflight: {} checks of the broker: {} ok, {} failed, {} could not be checked",
                found.checks().size(),
                found.checks().size() - failed - unchecked,
                failed,
                unchecked);
        for (Check check : found.checks()) {
            if (check.refuses()) {
                log.error(
                        "preflight: {} (the subscription stays unready; asked again every {} s)",
                        check.line(),
                        AGAIN.toSeconds());
            } else if (check.verdict() == Verdict.FAILED) {
                log.warn("preflight: {}", check.line());
            } else if (check.verdict() == Verdict.COULD_NOT_CHECK && !check.needsAdminUrl()) {
                log.info("preflight: {}", check.line());
            }
        }
        withoutAdminUrl(found).ifPresent(line -> log.info("preflight: {}", line));
    }

    /**
     * The checks not made only for want of {@code pulsar.adminUrl}, as one line rather than one each (a manifest of
     * a few subscriptions started with a dozen lines saying the same).
     */
    static Optional<String> withoutAdminUrl(PreflightReport found) {
        List<String> names = found.checks().stream()
                .filter(Check::needsAdminUrl)
                .map(check -> check.scope() + " " + check.name())
                .toList();
        return names.isEmpty()
                ? Optional.empty()
                : Optional.of(names.size() + " checks were not made, as pulsar.adminUrl is not set (they ask the"
                        + " broker's admin API; set it to have them made): " + String.join(", ", names));
    }

    @Override
    public void close() {
        closed = true;
    }
}
