package dev.settle.runtime.preflight;

import dev.settle.runtime.manifest.AdminSettings;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.pulsar.client.api.PulsarClient;

/**
 * The checks of a manifest against its broker (docs/preflight.md): for each subscription, whether each promise it
 * makes can hold there. Each check answers {@link Verdict ok, failed or could-not-check}; only a failed check of a
 * guarantee the manifest asks for refuses.
 *
 * <p>Nothing here writes to a user's topic or creates a subscription: the broker is asked over its admin API
 * (GETs, and a schema compatibility question that registers nothing), and a topic's produce permission is tried
 * with a producer that is opened and closed without a send, on a topic that exists already (a producer would create
 * a missing one, without the initial subscription a dead-letter topic gets from the runtime's).
 */
public final class BrokerPreflight {
    /** The scope of the checks of the {@code admin:} section's code store. */
    public static final String ADMIN = "admin.codeStore";
    /** Why a check was not made when the manifest has no admin URL: {@link Check#needsAdminUrl()} looks for it. */
    static final String NO_ADMIN_URL = "pulsar.adminUrl is not set";

    private final Manifest manifest;
    private final PulsarClient client;
    private final Optional<BrokerRest> rest;
    private final BrokerSettings settings;
    private boolean scaleToZero;
    /** Empty: a broker whose settings cannot be read is could-not-check for transactions. */
    private Optional<TransactionProbe> transactionProbe = Optional.empty();

    /** Begins and aborts a transaction, for a broker whose settings cannot be read; throws what went wrong. */
    @FunctionalInterface
    public interface TransactionProbe {
        void beginAndAbort() throws Exception;
    }

    private BrokerPreflight(Manifest manifest, PulsarClient client, Optional<BrokerRest> rest) {
        this.manifest = manifest;
        this.client = client;
        this.rest = rest;
        this.settings = new BrokerSettings(rest);
    }

    /**
     * The checks of {@code manifest}, asked through its {@code pulsar.adminUrl} and through {@code client} (a client
     * of the manifest's {@code pulsar:} section; left open).
     *
     * @throws IOException when the manifest's token file cannot be read
     */
    public static BrokerPreflight of(Manifest manifest, PulsarClient client) throws IOException {
        return new BrokerPreflight(manifest, client, BrokerRest.of(manifest.pulsar()));
    }

    /**
     * Whether the deployment scales to zero replicas: then each subscription must exist before the first start (a
     * scaler reads its backlog, and a missing one reads as none), and a missing one refuses.
     */
    public BrokerPreflight scaleToZero(boolean value) {
        this.scaleToZero = value;
        return this;
    }

    /** How to try a transaction when the broker's settings cannot be read; without it, could-not-check. */
    public BrokerPreflight transactionProbe(TransactionProbe probe) {
        this.transactionProbe = Optional.of(probe);
        return this;
    }

    /** Runs every check. */
    public PreflightReport run() {
        TopicChecks topics = new TopicChecks(client, rest, settings, scaleToZero);
        BrokerSettingChecks broker = new BrokerSettingChecks(rest, settings, transactionProbe);
        List<Check> checks = new ArrayList<>();
        JournalChecks journal = new JournalChecks(rest, settings);
        for (SubscriptionSpec spec : manifest.subscriptions()) {
            checks.addAll(subscription(spec, topics, broker));
            spec.journal().ifPresent(topic -> checks.add(journal.retention(spec.name(), topic)));
        }
        CodeStoreChecks codeStore = new CodeStoreChecks(rest, settings, topics);
        manifest.admin()
                .filter(admin -> admin.codeStore() == AdminSettings.CodeStore.PULSAR)
                .ifPresent(admin ->
                        checks.addAll(codeStore.checks(admin.codeNamespace().orElseThrow())));
        return new PreflightReport(checks);
    }

    private static List<Check> subscription(SubscriptionSpec spec, TopicChecks topics, BrokerSettingChecks broker) {
        String name = spec.name();
        boolean exactlyOnce = spec.guarantee() == Guarantee.EXACTLY_ONCE;
        List<Check> checks = new ArrayList<>();
        boolean batched = false;
        spec.topics()
                .pattern()
                .ifPresent(pattern -> checks.add(Check.couldNotCheck(
                        name,
                        "input-topics",
                        "topicsPattern '" + pattern
                                + "' is matched when the subscription starts; the topics it will match"
                                + " are not checked here")));
        for (String topic : spec.topics().names()) {
            checks.addAll(topics.input(spec, topic));
            if (batchIndexAckMatters(spec)) {
                Optional<Check> evidence = topics.batchedInput(name, topic);
                if (evidence.isPresent()) {
                    if (evidence.get().verdict() == Verdict.COULD_NOT_CHECK) {
                        checks.add(evidence.get());
                    } else {
                        batched = true;
                    }
                }
            }
        }
        if (exactlyOnce) {
            checks.add(broker.coordinator(name));
        }
        if (batchIndexAckMatters(spec)) {
            checks.add(broker.batchIndexAck(spec, batched));
        }
        spec.deadLetter().ifPresent(letter -> checks.add(topics.writable(name, "dead-letter-topic", letter.topic())));
        spec.function().output().ifPresent(output -> {
            checks.add(topics.writable(name, "output-topic", output));
            checks.add(topics.outputSchema(name, output, spec.function().outputSchema()));
            checks.add(broker.delayedDelivery(name, output));
        });
        spec.function().state().ifPresent(state -> checks.add(topics.writable(name, "state-topic", state)));
        if (exactlyOnce) {
            spec.function().output().ifPresent(output -> checks.add(broker.deduplication(name, output)));
            spec.deadLetter().ifPresent(letter -> checks.add(broker.deduplication(name, letter.topic())));
        }
        if (spec.type() == SubscriptionKind.SHARED || spec.type() == SubscriptionKind.KEY_SHARED) {
            spec.topics().names().stream().findFirst().ifPresent(topic -> checks.add(broker.unackedLimit(spec, topic)));
        }
        return checks;
    }

    /**
     * Exactly-once acknowledges single messages of a batch in a transaction (apache/pulsar#17061 loses data without
     * the broker's support), a cap dead-letters a batch's acknowledged siblings without it, and the client's side
     * alone ({@code batchIndexAck: true}) keeps the count from rising.
     */
    private static boolean batchIndexAckMatters(SubscriptionSpec spec) {
        return spec.guarantee() == Guarantee.EXACTLY_ONCE
                || spec.consumer().batchIndexAck()
                || spec.deadLetter().isPresent();
    }
}
