package dev.settle.runtime.preflight;

import dev.settle.runtime.manifest.SchemaKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.io.IOException;
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
 * The checks of one topic of a subscription: that it exists (or will be created), the role's permission to consume
 * from or produce to it, the subscription on an input, whether an input receives batches, and an output's schema.
 */
final class TopicChecks {
    private static final long PROBE_SECONDS = 10;
    /** The broker's reason, up to the end of its line (a backslash of an escaped newline, a quote). */
    private static final Pattern INCOMPATIBLE = Pattern.compile("Incompatible schema[^\\\\\"\\n]*");

    private final PulsarClient client;
    private final Optional<BrokerRest> rest;
    private final BrokerSettings settings;
    private final boolean scaleToZero;

    TopicChecks(PulsarClient client, Optional<BrokerRest> rest, BrokerSettings settings, boolean scaleToZero) {
        this.client = client;
        this.rest = rest;
        this.settings = settings;
        this.scaleToZero = scaleToZero;
    }

    /** The topic exists (or may be created), the role may consume from it, and the subscription exists. */
    List<Check> input(SubscriptionSpec spec, String topic) {
        String name = spec.name();
        if (rest.isEmpty()) {
            return List.of(Check.couldNotCheck(name, "input-topic", noAdminUrl(topic)));
        }
        BrokerRest.Answer subscriptions;
        try {
            subscriptions = rest.get().get(AdminPaths.topicPath(topic) + "/subscriptions");
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
            BrokerRest.Answer override = rest.get().get(AdminPaths.namespacePath(topic) + "/autoTopicCreation");
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
    Optional<Check> batchedInput(String name, String topic) {
        if (rest.isEmpty()) {
            return Optional.empty();
        }
        try {
            BrokerRest.Answer latest = rest.get()
                    .get(AdminPaths.topicPath(topic) + "/examinemessage?initialPosition=latest&messagePosition=1");
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

    /** The role may produce to {@code topic}: tried with a producer opened and closed without a send. */
    Check writable(String name, String check, String topic) {
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
            BrokerRest.Answer stats = rest.get().get(AdminPaths.topicPath(topic) + "/stats");
            if (stats.ok()) {
                return Existence.EXISTS;
            }
            if (stats.forbidden()) {
                return Existence.FORBIDDEN;
            }
            if (stats.status() == 404) {
                // A partitioned topic has no stats of its own, only its partitions have.
                BrokerRest.Answer partitions = rest.get().get(AdminPaths.topicPath(topic) + "/partitions");
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

    Check outputSchema(String name, String topic, Optional<SchemaKind> declared) {
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
                            "/admin/v2/schemas/" + AdminPaths.localPath(topic) + "/compatibility",
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

    private String noAdminUrl(String topic) {
        return topic + " was not checked: " + BrokerPreflight.NO_ADMIN_URL + " (preflight asks the broker's admin API)";
    }

    private static String firstLine(Throwable e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return message.lines().findFirst().orElse("");
    }
}
