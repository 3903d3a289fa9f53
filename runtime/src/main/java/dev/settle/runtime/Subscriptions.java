package dev.settle.runtime;

import dev.settle.runtime.driver.DriverWiring;
import dev.settle.runtime.driver.SubscriptionDriver;
import dev.settle.runtime.driver.Tracing;
import dev.settle.runtime.journal.Journals;
import dev.settle.runtime.live.LiveCode;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.PulsarSettings;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.observe.HealthEndpoint;
import dev.settle.runtime.observe.SettleMetrics;
import dev.settle.runtime.observe.SubscriptionProbe;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.apache.pulsar.client.api.PulsarClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running subscriptions, by name, in the manifest's order, and what each driver starts with: the Pulsar client,
 * the transactions of exactly-once subscriptions, tracing, the settlement journal, the metrics and /readyz that
 * watch it. Opens a subscription's code ({@link SubscriptionOpener}), starts and stops its driver, and stops them all
 * side by side ({@link Stopping}). The runtime's start and its manifest reloads both go through it, and it knows
 * neither.
 *
 * <p>Thread-safe through this object's monitor: a reload changes the running subscriptions under it, and a stop
 * takes it to say that nothing may start any more.
 */
final class Subscriptions {
    private static final Logger log = LoggerFactory.getLogger(Subscriptions.class);

    /** Every running subscription, by name, in the manifest's order. Guarded by this object's monitor. */
    private final Map<String, RunningSubscription> running = new LinkedHashMap<>();

    private final SubscriptionOpener opener;
    /** The transactions of exactly-once subscriptions: its client is made at the first of them. */
    private final TransactionClient transactions;
    /** The broker preflight: a subscription whose promises cannot hold there waits, unready, saying why. */
    private final BrokerChecks brokerChecks;
    /** With {@code tracing: true}: traces every handling; null otherwise, and nothing of OpenTelemetry is loaded. */
    private final Tracing tracing;

    private final SettleMetrics metrics;
    private final HealthEndpoint health;
    private final Time time;
    private final Duration grace;
    /** Told when a handler hits an error the process cannot be trusted to survive: (subscription, error). */
    private final BiConsumer<String, Throwable> fatal;

    /** Null until the client is created (the handlers open before it); publishers ask for it at their first send. */
    private volatile PulsarClient client;
    /** The settlement journal's writers, one per journal topic in use: made with the client, null before it. */
    private volatile Journals journals;
    /** With {@code admin:} in the manifest: the live code, once restored; null otherwise. */
    private volatile LiveCode live;
    /** Guarded by this object's monitor. */
    private boolean closed;

    /**
     * @param pulsar the settings the transactions' client is made with
     * @param grace how long a stopping driver lets its handler calls run on
     * @param fatal told (subscription, error) when a handler hits a {@link VirtualMachineError}
     */
    Subscriptions(
            PulsarSettings pulsar,
            Tracing tracing,
            SettleMetrics metrics,
            HealthEndpoint health,
            Time time,
            Duration grace,
            BiConsumer<String, Throwable> fatal) {
        this.tracing = tracing;
        this.metrics = metrics;
        this.health = health;
        this.time = time;
        this.grace = grace;
        this.fatal = fatal;
        this.opener = new SubscriptionOpener(() -> client, metrics, time);
        this.transactions = new TransactionClient(pulsar, time);
        this.brokerChecks = new BrokerChecks(() -> client, time);
    }

    SubscriptionOpener opener() {
        return opener;
    }

    /** The live code, restored before the handlers open: an upload it restored runs instead of the manifest's. */
    void live(LiveCode restored) {
        live = restored;
        opener.live(restored);
    }

    /** The live code, when the manifest turns the admin API on. */
    Optional<LiveCode> live() {
        return Optional.ofNullable(live);
    }

    /** The client the drivers subscribe with, once the handlers are open (functions are opened after it). */
    void connect(PulsarClient created) {
        client = created;
        journals = Journals.of(created, time);
    }

    /**
     * Asks the broker whether each subscription of {@code manifest} can keep its promises there, in the background: at
     * start and after every reload (docs/preflight.md).
     */
    void checkBroker(Manifest manifest) {
        brokerChecks.check(manifest);
    }

    /** Before a reload: the subscriptions it starts wait for the checks of the manifest it leaves running. */
    void pauseBrokerChecks() {
        brokerChecks.pause();
    }

    /** What the live client, consumers and producers run with ({@code GET /config/effective}). */
    synchronized Map<String, Object> effectiveConfiguration() {
        return EffectiveConfiguration.of(client, List.copyOf(running.values()), transactions.notReady());
    }

    /**
     * The outage circuit breaker of the subscription {@code name} ({@code state}, {@code reason}, {@code held}), for
     * {@code settle status}; empty when none runs by that name or its driver has not started.
     */
    synchronized Optional<Map<String, Object>> breaker(String name) {
        return Optional.ofNullable(running.get(name))
                .flatMap(RunningSubscription::driver)
                .map(driver -> {
                    Map<String, Object> breaker = new java.util.LinkedHashMap<>();
                    breaker.put("state", driver.breakerState());
                    breaker.put("reason", driver.breakerReason());
                    breaker.put("held", driver.heldForOutage());
                    return breaker;
                });
    }

    /**
     * The running Pulsar Functions' subscriptions, each with its function's class, in the manifest's order: they keep
     * no generations, so the live code does not list them, and {@code settle status} shows their breaker from here.
     */
    synchronized Map<String, String> functions() {
        Map<String, String> functions = new java.util.LinkedHashMap<>();
        running.values().stream()
                .map(RunningSubscription::spec)
                .filter(spec -> spec.handler().function())
                .forEach(spec ->
                        functions.put(spec.name(), spec.handler().className().orElseThrow()));
        return functions;
    }

    /** The specs of the running subscriptions, for the drain-time metrics. */
    synchronized List<SubscriptionSpec> runningSpecs() {
        return running.values().stream().map(RunningSubscription::spec).toList();
    }

    /** Adds an opened subscription at start; its driver starts with {@link #startDrivers}. */
    synchronized void add(RunningSubscription subscription) {
        running.put(subscription.name(), subscription);
    }

    /** Starts the driver of every added subscription, at start, in the manifest's order. */
    synchronized void startDrivers(List<SubscriptionSpec> inOrder) {
        inOrder.forEach(spec -> startDriver(running.get(spec.name())));
    }

    /**
     * Adds an opened subscription and starts its driver (a reload); when the driver cannot start, takes it out again
     * and throws (its code and outputs are the caller's to close).
     */
    synchronized void start(RunningSubscription subscription) {
        running.put(subscription.name(), subscription);
        try {
            startDriver(subscription);
        } catch (RuntimeException e) {
            stop(subscription.name());
            throw e;
        }
    }

    /**
     * Drains and stops a subscription's driver (which flushes its acks) and takes it out of the running ones; its
     * code and outputs are the caller's to close.
     */
    synchronized RunningSubscription stop(String name) {
        RunningSubscription subscription = running.remove(name);
        health.unwatch(name);
        metrics.unwatchReceiverQueue(name);
        metrics.unwatchKeyHolds(name);
        subscription.stop(grace);
        return subscription;
    }

    /** A running subscription, by name; null when none runs by that name. */
    synchronized RunningSubscription get(String name) {
        return running.get(name);
    }

    /** Whether the runtime is stopping: nothing starts any more. */
    synchronized boolean isClosed() {
        return closed;
    }

    /** Starts a subscription's driver on its running code and has it watched. */
    private void startDriver(RunningSubscription subscription) {
        SubscriptionSpec spec = subscription.spec();
        boolean exactlyOnce = spec.guarantee() == Guarantee.EXACTLY_ONCE;
        if (exactlyOnce) {
            transactions.start();
        }
        // An exactly-once subscription subscribes once its outputs can be written and transactions can be begun,
        // and any subscription once the broker preflight found nothing that fails it.
        Supplier<Optional<String>> outputs = exactlyOnce
                ? () -> subscription.outputs().notReady().or(transactions::notReady)
                : subscription.outputs()::notReady;
        Supplier<Optional<String>> notReady =
                () -> brokerChecks.notReady(spec.name()).or(outputs);
        DriverWiring wiring = DriverWiring.NONE
                .withOutputs(notReady, subscription.outputs()::flush)
                .withTransactions(exactlyOnce ? transactions : null)
                .withTracing(tracing)
                .withJournal(journals.forSubscription(spec));
        SubscriptionDriver driver = subscription.start((port, schema) -> SubscriptionDriver.start(
                client, spec, port, schema, time, metrics.forSubscription(spec.name()), wiring));
        driver.fatalError().thenAccept(error -> fatal.accept(spec.name(), error));
        metrics.watchReceiverQueue(spec.name(), driver::messagesInReceiverQueue);
        metrics.watchKeyHolds(spec.name(), () -> driver.oldestKeyHold().toNanos() / 1e9);
        metrics.watchConnection(spec.name(), driver::isConnected);
        metrics.watchSettingsInForce(spec.name(), EffectiveConfiguration.watch(spec, driver::consumer));
        spec.journal().ifPresent(topic -> metrics.watchJournal(topic, journals.dropped(topic)));
        health.watch(SubscriptionProbe.of(driver));
    }

    /**
     * Each running subscription's driver as it stands now, one a line: what a test prints when a message it waits for
     * is not handled in time.
     */
    synchronized String describe() {
        StringBuilder text = new StringBuilder();
        running.values()
                .forEach(subscription -> text.append(subscription.describe()).append('\n'));
        return text.toString();
    }

    /**
     * Says nothing may start any more and hands back every running subscription, for {@link #drain} and
     * {@link #closeCode}: a reload under way has finished by then (it holds this monitor), the next one is refused.
     */
    synchronized List<RunningSubscription> close() {
        closed = true;
        return new ArrayList<>(running.values());
    }

    /** Stops every driver at once: each lets its calls run up to the grace, then closes its consumer. */
    void drain(List<RunningSubscription> all) {
        Stopping.drain(all, grace);
    }

    /** Closes the code of {@code all} side by side, waiting no longer than {@code deadlineNanos} on the clock. */
    void closeCode(List<RunningSubscription> all, long deadlineNanos) {
        Stopping.closeCode(all, deadlineNanos, grace, time);
    }

    /**
     * Closes the journal's writers, the transactions' client and the Pulsar client, once the drivers are stopped and
     * every output sent: no delivery begins or commits a transaction any more, and every acknowledgement is flushed.
     */
    void closeClients() {
        Journals writers = journals;
        if (writers != null) {
            // Every delivery is settled: the last records are sent before the client goes.
            writers.close();
        }
        transactions.close();
        brokerChecks.close();
        PulsarClient made = client;
        if (made != null) {
            // The client's own close sits out Netty's two-second quiet period, so it runs in the background.
            made.closeAsync().exceptionally(e -> {
                log.warn("closing the Pulsar client failed", e);
                return null;
            });
        }
    }
}
