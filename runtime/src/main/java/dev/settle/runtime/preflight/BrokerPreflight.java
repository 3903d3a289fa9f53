package dev.settle.runtime.preflight;

import dev.settle.runtime.manifest.AdminSettings;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.SchemaKind;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.manifest.Topics;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;

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

    private static final long PROBE_SECONDS = 10;
    /** The broker's reason, up to the end of its line (a backslash of an escaped newline, a quote). */
    private static final Pattern INCOMPATIBLE = Pattern.compile("Incompatible schema[^\\\\\"\\n]*");

    private final Manifest manifest;
    private final PulsarClient client;
    private final Optional<BrokerRest> rest;
    private final BrokerSettings settings;
    private boolean scaleToZero;
    private TransactionProbe transactionProbe;

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
        this.transactionProbe = probe;
        return this;
    }

    /** Runs every check. */
    public PreflightReport run() {
        List<Check> checks = new ArrayList<>();
        for (SubscriptionSpec spec : manifest.subscriptions()) {
            checks.addAll(subscription(spec));
        }
        manifest.admin()
                .filter(admin -> admin.codeStore() == AdminSettings.CodeStore.PULSAR)
                .ifPresent(
                        admin -> checks.addAll(codeStore(admin.codeNamespace().orElseThrow())));
        return new PreflightReport(checks);
    }

    private List<Check> subscription(SubscriptionSpec spec) {
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
            checks.addAll(input(spec, topic));
            if (batchIndexAckMatters(spec)) {
                Optional<Check> evidence = batchedInput(name, topic);
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
            checks.add(coordinator(name));
        }
        if (batchIndexAckMatters(spec)) {
            checks.add(batchIndexAck(spec, batched));
        }
        spec.deadLetter().ifPresent(letter -> checks.add(writable(name, "dead-letter-topic", letter.topic())));
        spec.function().output().ifPresent(output -> {
            checks.add(writable(name, "output-topic", output));
            checks.add(outputSchema(name, output, spec.function().outputSchema()));
            checks.add(delayedDelivery(name, output));
        });
        spec.function().state().ifPresent(state -> checks.add(writable(name, "state-topic", state)));
        if (exactlyOnce) {
            spec.function().output().ifPresent(output -> checks.add(deduplication(name, output)));
            spec.deadLetter().ifPresent(letter -> checks.add(deduplication(name, letter.topic())));
        }
        if (spec.type() == SubscriptionKind.SHARED || spec.type() == SubscriptionKind.KEY_SHARED) {
            spec.topics().names().stream().findFirst().ifPresent(topic -> checks.add(unackedLimit(spec, topic)));
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

    /** The topic exists (or may be created), the role may consume from it, and the subscription exists. */
    private List<Check> input(SubscriptionSpec spec, String topic) {
        String name = spec.name();
        if (rest.isEmpty()) {
            return List.of(Check.couldNotCheck(name, "input-topic", noAdminUrl(topic)));
        }
        BrokerRest.Answer subscriptions;
        try {
            subscriptions = rest.get().get(topicPath(topic) + "/subscriptions");
        } catch (IOException e) {
            return List.of(Check.couldNotCheck(name, "input-topic", e.getMessage()));
        }
        if (subscriptions.forbidden()) {
            return List.of(Check.failed(
                    name,
                    "consume-permission",
                    true,
                    "the role may not consume from " + topic + " (" + subscriptions.describe() + "): grant it, as"
                            + " pulsar-admin topics grant-permission --role <role> --actions consume " + topic));
        }
        List<Check> checks = new ArrayList<>();
        if (subscriptions.status() == 404) {
            checks.add(missingTopic(name, "input-topic", topic, true));
            checks.add(subscriptionExists(name, topic, false));
            return checks;
        }
        if (!subscriptions.ok()) {
            return List.of(Check.couldNotCheck(name, "input-topic", subscriptions.describe()));
        }
        checks.add(Check.ok(name, "consume-permission", "the role may read " + topic + "'s subscriptions"));
        Object names = subscriptions.json();
        checks.add(subscriptionExists(name, topic, names instanceof List<?> list && list.contains(name)));
        return checks;
    }

    private Check subscriptionExists(String name, String topic, boolean exists) {
        if (exists) {
            return Check.ok(name, "subscription", "'" + name + "' exists on " + topic);
        }
        return Check.failed(
                name,
                "subscription",
                scaleToZero,
                "'" + name + "' does not exist on " + topic + " yet: a scaler reading its backlog sees none, so a"
                        + " deployment scaled to zero never starts; create it (pulsar-admin topics"
                        + " create-subscription -s " + name + " " + topic + ") or start once with a replica"
                        + (scaleToZero ? "" : " (this refuses only with --scale-to-zero)"));
    }

    /** A topic that does not exist: fine while the broker creates topics on first use. */
    private Check missingTopic(String name, String check, String topic, boolean asked) {
        Optional<Boolean> allowed = autoTopicCreation(topic);
        if (allowed.isEmpty()) {
            return Check.couldNotCheck(
                    name,
                    check,
                    topic + " does not exist, and whether the broker creates it could not be read: "
                            + settings.read("allowAutoTopicCreation").whyNot());
        }
        if (allowed.get()) {
            return Check.ok(
                    name,
                    check,
                    topic + " does not exist yet; the broker creates it on first use" + " (allowAutoTopicCreation)");
        }
        return Check.failed(
                name,
                check,
                asked,
                topic + " does not exist and the broker does not create topics (allowAutoTopicCreation=false, or"
                        + " the namespace's autoTopicCreation override): create it, as pulsar-admin topics create "
                        + topic);
    }

    private Optional<Boolean> autoTopicCreation(String topic) {
        try {
            BrokerRest.Answer override = rest.get().get(namespacePath(topic) + "/autoTopicCreation");
            if (override.ok()
                    && override.json() instanceof Map<?, ?> map
                    && map.get("allowAutoTopicCreation") instanceof Boolean allowed) {
                return Optional.of(allowed);
            }
        } catch (IOException | RuntimeException e) {
            // Falls back to the broker's setting.
        }
        BrokerSettings.Reading broker = settings.read("allowAutoTopicCreation");
        return broker.value().map(Boolean::parseBoolean);
    }

    /** Whether the latest message of an input is a batch; empty when it is not (or there is none). */
    private Optional<Check> batchedInput(String name, String topic) {
        if (rest.isEmpty()) {
            return Optional.empty();
        }
        try {
            BrokerRest.Answer latest =
                    rest.get().get(topicPath(topic) + "/examinemessage?initialPosition=latest&messagePosition=1");
            if (latest.ok()) {
                return latest.header("X-Pulsar-num-batch-message")
                        .map(count ->
                                Check.ok(name, "batched-input", topic + "'s latest message is a batch of " + count));
            }
            if (latest.forbidden()) {
                return Optional.of(Check.couldNotCheck(
                        name,
                        "batched-input",
                        "whether " + topic + " receives batches could not be read: " + latest.describe()
                                + " (peeking needs the consume permission)"));
            }
            // No message yet (or no topic): nothing batched to see.
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of(Check.couldNotCheck(name, "batched-input", e.getMessage()));
        }
    }

    private Check coordinator(String name) {
        BrokerSettings.Reading enabled = settings.read("transactionCoordinatorEnabled");
        if (enabled.value().isPresent()) {
            return enabled.is("true")
                    ? Check.ok(name, "transaction-coordinator", "transactionCoordinatorEnabled=true")
                    : Check.failed(
                            name,
                            "transaction-coordinator",
                            true,
                            "guarantee: exactly-once needs the broker's transaction coordinator, and the broker has"
                                    + " transactionCoordinatorEnabled="
                                    + enabled.value().get() + ": set it to true"
                                    + " on every broker (with systemTopicEnabled=true) and initialise the"
                                    + " coordinator's metadata once (pulsar initialize-transaction-coordinator-metadata)");
        }
        if (transactionProbe == null) {
            return Check.couldNotCheck(name, "transaction-coordinator", enabled.whyNot());
        }
        try {
            transactionProbe.beginAndAbort();
            return Check.ok(
                    name, "transaction-coordinator", "a transaction was begun and aborted (" + enabled.whyNot() + ")");
        } catch (Exception e) {
            return Check.failed(
                    name,
                    "transaction-coordinator",
                    true,
                    "guarantee: exactly-once needs the broker's transaction coordinator, and no transaction could be"
                            + " begun (" + e + "): enable transactionCoordinatorEnabled on the brokers");
        }
    }

    private Check batchIndexAck(SubscriptionSpec spec, boolean batched) {
        String name = spec.name();
        BrokerSettings.Reading enabled = settings.read("acknowledgmentAtBatchIndexLevelEnabled");
        if (enabled.value().isEmpty()) {
            return Check.couldNotCheck(name, "batch-index-ack", enabled.whyNot());
        }
        if (enabled.is("true")) {
            return Check.ok(name, "batch-index-ack", "acknowledgmentAtBatchIndexLevelEnabled=true");
        }
        if (spec.consumer().batchIndexAck()) {
            return Check.failed(
                    name,
                    "batch-index-ack",
                    true,
                    "batchIndexAck: true, and the broker has acknowledgmentAtBatchIndexLevelEnabled=false: the"
                            + " client's side alone keeps a batched message's redelivery count from rising, so its"
                            + " cap never fires; set acknowledgmentAtBatchIndexLevelEnabled=true on the brokers, or"
                            + " remove batchIndexAck");
        }
        if (!batched) {
            return Check.ok(
                    name,
                    "batch-index-ack",
                    "acknowledgmentAtBatchIndexLevelEnabled=false, and no input's latest message is a batch (should"
                            + " producers batch later, set it to true on the brokers)");
        }
        boolean exactlyOnce = spec.guarantee() == Guarantee.EXACTLY_ONCE;
        return Check.failed(
                name,
                "batch-index-ack",
                exactlyOnce,
                "an input receives batches and the broker has acknowledgmentAtBatchIndexLevelEnabled=false: "
                        + (exactlyOnce
                                ? "a transaction cannot acknowledge one message of a batch (apache/pulsar#17061)"
                                : "a retried message brings its whole batch back, and the cap dead-letters its"
                                        + " acknowledged siblings")
                        + "; set acknowledgmentAtBatchIndexLevelEnabled=true on the brokers and batchIndexAck: true"
                        + ", or publish without batching");
    }

    /** The role may produce to {@code topic}: tried with a producer opened and closed without a send. */
    private Check writable(String name, String check, String topic) {
        Existence existence = exists(topic);
        if (existence == Existence.FORBIDDEN) {
            // Pulsar answers a topic's stats to a role that may produce or consume there: this one may do neither.
            return mayNotProduce(name, check, topic, "its stats are refused to the role");
        }
        if (existence == Existence.MISSING) {
            return missingTopic(name, check, topic, true);
        }
        if (existence == Existence.UNKNOWN) {
            return Check.couldNotCheck(
                    name,
                    check,
                    rest.isEmpty()
                            ? noAdminUrl(topic)
                            : "whether " + topic + " exists could not be read, so no producer was tried (one would"
                                    + " create it)");
        }
        Producer<byte[]> producer = null;
        try {
            // AUTO_PRODUCE_BYTES takes the topic's own schema: nothing is registered, and nothing is sent.
            producer = client.newProducer(Schema.AUTO_PRODUCE_BYTES())
                    .topic(topic)
                    .createAsync()
                    .get(PROBE_SECONDS, TimeUnit.SECONDS);
            return Check.ok(name, check, "the role may produce to " + topic);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof PulsarClientException.AuthorizationException refused) {
                return mayNotProduce(name, check, topic, firstLine(refused));
            }
            return Check.couldNotCheck(
                    name, check, "a producer on " + topic + " could not be opened: " + firstLine(e.getCause()));
        } catch (TimeoutException e) {
            return Check.couldNotCheck(
                    name, check, "a producer on " + topic + " did not open within " + PROBE_SECONDS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Check.couldNotCheck(name, check, "interrupted");
        } finally {
            if (producer != null) {
                producer.closeAsync();
            }
        }
    }

    private static Check mayNotProduce(String name, String check, String topic, String why) {
        return Check.failed(
                name,
                check,
                true,
                "the role may not produce to " + topic + " (" + why + "): grant it, as pulsar-admin topics"
                        + " grant-permission --role <role> --actions produce " + topic);
    }

    private enum Existence {
        EXISTS,
        MISSING,
        FORBIDDEN,
        UNKNOWN
    }

    private Existence exists(String topic) {
        if (rest.isEmpty()) {
            return Existence.UNKNOWN;
        }
        try {
            BrokerRest.Answer stats = rest.get().get(topicPath(topic) + "/stats");
            if (stats.ok()) {
                return Existence.EXISTS;
            }
            if (stats.forbidden()) {
                return Existence.FORBIDDEN;
            }
            if (stats.status() == 404) {
                // A partitioned topic has no stats of its own, only its partitions have.
                BrokerRest.Answer partitions = rest.get().get(topicPath(topic) + "/partitions");
                if (partitions.ok()
                        && partitions.json() instanceof Map<?, ?> map
                        && map.get("partitions") instanceof Number count
                        && count.intValue() > 0) {
                    return Existence.EXISTS;
                }
                return Existence.MISSING;
            }
            return Existence.UNKNOWN;
        } catch (IOException | RuntimeException e) {
            return Existence.UNKNOWN;
        }
    }

    private Check outputSchema(String name, String topic, Optional<SchemaKind> declared) {
        if (declared.isEmpty() || declared.get() == SchemaKind.JSON || declared.get() == SchemaKind.AVRO) {
            return Check.couldNotCheck(
                    name,
                    "output-schema",
                    "the schema of " + topic + "'s outputs is the function's output type's, known once its code is"
                            + " loaded: it is not checked here (an incompatible one refuses the producer at the first"
                            + " output; outputSchema: string or bytes is checked)");
        }
        if (declared.get() == SchemaKind.BYTES) {
            return Check.ok(name, "output-schema", "outputSchema: bytes carries no schema to check");
        }
        if (rest.isEmpty()) {
            return Check.couldNotCheck(name, "output-schema", noAdminUrl(topic));
        }
        try {
            BrokerRest.Answer answer = rest.get()
                    .post(
                            "/admin/v2/schemas/" + localPath(topic) + "/compatibility",
                            "{\"type\":\"STRING\",\"schema\":\"\",\"properties\":{}}");
            if (answer.ok() && answer.json() instanceof Map<?, ?> map) {
                Object strategy = map.get("schemaCompatibilityStrategy");
                if (Boolean.TRUE.equals(map.get("compatibility"))) {
                    return Check.ok(
                            name,
                            "output-schema",
                            "STRING is compatible with " + topic + "'s schema" + " (strategy " + strategy + ")");
                }
                return Check.failed(
                        name,
                        "output-schema",
                        true,
                        "outputSchema: string is not compatible with " + topic + "'s schema under its"
                                + " compatibility strategy " + strategy + ": the producer would be refused at the"
                                + " first output; publish to a topic of that schema, set outputSchema to it, or"
                                + " change the topic's schema (pulsar-admin schemas get " + topic + " shows it)");
            }
            if (answer.status() == 404) {
                return Check.ok(name, "output-schema", topic + " has no schema yet: STRING will be its first");
            }
            Matcher incompatible = INCOMPATIBLE.matcher(answer.body());
            if (incompatible.find()) {
                // Pulsar 4.2.4 answers a schema of another type with a 500 and this message, not with false.
                return Check.failed(
                        name,
                        "output-schema",
                        true,
                        "outputSchema: string cannot be published to " + topic + ", the broker answers '"
                                + incompatible.group()
                                + "': publish to a topic of that schema, set outputSchema to it, or change the"
                                + " topic's schema (pulsar-admin schemas get " + topic + " shows it)");
            }
            return Check.couldNotCheck(name, "output-schema", answer.describe());
        } catch (IOException | RuntimeException e) {
            return Check.couldNotCheck(name, "output-schema", e.getMessage());
        }
    }

    private Check deduplication(String name, String topic) {
        Optional<Boolean> enabled = Optional.empty();
        String source = "";
        String whyNot = "";
        if (rest.isPresent()) {
            try {
                BrokerRest.Answer namespace = rest.get().get(namespacePath(topic) + "/deduplication");
                if (namespace.ok() && namespace.json() instanceof Boolean set) {
                    enabled = Optional.of(set);
                    source = "the namespace's deduplication";
                } else if (!namespace.ok()) {
                    whyNot = namespace.describe() + "; ";
                }
            } catch (IOException | RuntimeException e) {
                whyNot = e.getMessage() + "; ";
            }
        }
        if (enabled.isEmpty()) {
            BrokerSettings.Reading broker = settings.read("brokerDeduplicationEnabled");
            if (broker.value().isEmpty()) {
                return Check.couldNotCheck(name, "deduplication", whyNot + broker.whyNot());
            }
            enabled = Optional.of(broker.is("true"));
            source = "brokerDeduplicationEnabled";
        }
        if (enabled.get()) {
            return Check.ok(name, "deduplication", topic + ": on (" + source + ")");
        }
        return Check.failed(
                name,
                "deduplication",
                false,
                topic + ": off (" + source + "=false): a send the broker stored without confirming it before a"
                        + " restart is sent again into the same transaction and read twice; turn it on"
                        + " (pulsar-admin namespaces set-deduplication --enable " + namespace(topic)
                        + ", or brokerDeduplicationEnabled=true)");
    }

    private Check delayedDelivery(String name, String topic) {
        if (rest.isPresent()) {
            try {
                BrokerRest.Answer namespace = rest.get().get(namespacePath(topic) + "/delayedDelivery");
                if (namespace.ok()
                        && namespace.json() instanceof Map<?, ?> map
                        && map.get("active") instanceof Boolean active) {
                    return delayed(name, topic, active, "the namespace's delayedDelivery");
                }
            } catch (IOException | RuntimeException e) {
                // Falls back to the broker's setting.
            }
        }
        BrokerSettings.Reading broker = settings.read("delayedDeliveryEnabled");
        if (broker.value().isEmpty()) {
            return Check.couldNotCheck(name, "delayed-delivery", broker.whyNot());
        }
        return delayed(name, topic, broker.is("true"), "delayedDeliveryEnabled");
    }

    private static Check delayed(String name, String topic, boolean active, String source) {
        return active
                ? Check.ok(name, "delayed-delivery", topic + ": on (" + source + ")")
                : Check.failed(
                        name,
                        "delayed-delivery",
                        false,
                        topic + ": off (" + source + "=false): outputs sent with deliverAt or deliverAfter are"
                                + " delivered at once; set delayedDeliveryEnabled=true on the brokers (or pulsar-admin"
                                + " namespaces set-delayed-delivery --enable " + namespace(topic) + ")");
    }

    /** The broker stops dispatching to a consumer at its unacked limit; a receiver queue above it never fills. */
    private Check unackedLimit(SubscriptionSpec spec, String topic) {
        String name = spec.name();
        Optional<Integer> limit = Optional.empty();
        String source = "";
        if (rest.isPresent()) {
            try {
                BrokerRest.Answer namespace = rest.get().get(namespacePath(topic) + "/maxUnackedMessagesPerConsumer");
                if (namespace.ok() && namespace.json() instanceof Number set) {
                    limit = Optional.of(set.intValue());
                    source = "the namespace's maxUnackedMessagesPerConsumer";
                }
            } catch (IOException | RuntimeException e) {
                // Falls back to the broker's setting.
            }
        }
        if (limit.isEmpty()) {
            BrokerSettings.Reading broker = settings.read("maxUnackedMessagesPerConsumer");
            if (broker.value().isEmpty()) {
                return Check.couldNotCheck(name, "unacked-limit", broker.whyNot());
            }
            limit = Optional.of(Integer.parseInt(broker.value().get().strip()));
            source = "maxUnackedMessagesPerConsumer";
        }
        int queue = spec.consumer().receiverQueueSize();
        int needed = queue + spec.concurrency();
        if (limit.get() == 0 || limit.get() >= needed) {
            return Check.ok(
                    name,
                    "unacked-limit",
                    source + "=" + limit.get()
                            + (limit.get() == 0
                                    ? " (none)"
                                    : ", above the receiver queue (" + queue + ") and the calls in flight ("
                                            + spec.concurrency() + ")"));
        }
        return Check.failed(
                name,
                "unacked-limit",
                false,
                source + "=" + limit.get() + " is below the receiver queue (" + queue + ") plus the calls in flight ("
                        + spec.concurrency() + "), and held retries count too: the broker stops dispatching to the"
                        + " consumer before its queue fills; lower receiverQueueSize or raise the limit");
    }

    /** Package management on, and the role's rights in the code namespace (admin.codeStore: pulsar). */
    private List<Check> codeStore(String namespace) {
        if (rest.isEmpty()) {
            return List.of(Check.couldNotCheck(
                    ADMIN,
                    "package-management",
                    NO_ADMIN_URL + ", and admin.codeStore: pulsar keeps code as packages there"));
        }
        List<Check> checks = new ArrayList<>();
        try {
            BrokerRest.Answer packages = rest.get().get("/admin/v3/packages/function/" + namespace);
            BrokerSettings.Reading enabled = settings.read("enablePackagesManagement");
            if (enabled.value().isPresent() && !enabled.is("true")) {
                checks.add(Check.failed(
                        ADMIN,
                        "package-management",
                        true,
                        "admin.codeStore: pulsar keeps code as Pulsar packages, and the broker has"
                                + " enablePackagesManagement=" + enabled.value().get() + ": set it to true (with a"
                                + " packagesManagementStorageProvider), or use admin.codeStore: disk"));
            } else if (packages.ok()) {
                checks.add(Check.ok(ADMIN, "package-management", "the role may list the packages of " + namespace));
            } else if (packages.forbidden()) {
                checks.add(Check.failed(
                        ADMIN,
                        "package-management",
                        true,
                        "the role may not use the packages of " + namespace + " (" + packages.describe()
                                + "): grant it, as pulsar-admin namespaces grant-permission --role <role> --actions"
                                + " packages,produce,consume " + namespace));
            } else {
                checks.add(Check.failed(
                        ADMIN,
                        "package-management",
                        true,
                        "admin.codeStore: pulsar keeps code as Pulsar packages, and " + packages.describe()
                                + ": check that the broker has enablePackagesManagement=true, or use"
                                + " admin.codeStore: disk"));
            }
        } catch (IOException e) {
            checks.add(Check.couldNotCheck(ADMIN, "package-management", e.getMessage()));
        }
        checks.add(writable(ADMIN, "code-records-topic", "persistent://" + namespace + "/settle-code"));
        return checks;
    }

    private String noAdminUrl(String topic) {
        return topic + " was not checked: " + NO_ADMIN_URL + " (preflight asks the broker's admin API)";
    }

    private static String firstLine(Throwable e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return message.lines().findFirst().orElse("");
    }

    /** {@code persistent://t/ns/topic} as {@code /admin/v2/persistent/t/ns/topic}. */
    static String topicPath(String topic) {
        topic = Topics.fullName(topic);
        String domain = topic.startsWith("non-persistent://") ? "non-persistent" : "persistent";
        return "/admin/v2/" + domain + "/" + localPath(topic);
    }

    /** {@code persistent://t/ns/topic} as {@code t/ns/topic}, the local name URL-encoded. */
    static String localPath(String topic) {
        String rest = Topics.fullName(topic);
        rest = rest.substring(rest.indexOf("://") + 3);
        String[] parts = rest.split("/", 3);
        return parts[0] + "/" + parts[1] + "/" + URLEncoder.encode(parts[2], StandardCharsets.UTF_8);
    }

    static String namespace(String topic) {
        String rest = Topics.fullName(topic);
        rest = rest.substring(rest.indexOf("://") + 3);
        String[] parts = rest.split("/", 3);
        return parts[0] + "/" + parts[1];
    }

    private static String namespacePath(String topic) {
        return "/admin/v2/namespaces/" + namespace(topic);
    }
}
