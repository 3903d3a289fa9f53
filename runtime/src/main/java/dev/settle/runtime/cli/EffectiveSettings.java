package dev.settle.runtime.cli;

import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.PulsarSettings;
import dev.settle.runtime.manifest.SchemaKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.io.PrintStream;
import java.util.List;
import java.util.Optional;
import java.util.Locale;
import java.util.TreeMap;

/**
 * Prints what Pulsar will actually get from a valid manifest, subscription by subscription, in the Pulsar
 * client's own terms, with every default filled in. Secrets print as {@code [REDACTED]}; so does every
 * {@code config} value that came from a {@code ${...}} substitution, because the environment is where deployments
 * put secrets, while a value written in the manifest is already visible to whoever reads it.
 */
final class EffectiveSettings {
    private static final String REDACTED = "[REDACTED]";

    private final PrintStream out;
    private final HandlerCheck handlers;

    /** @param handlers the check that ran, for what it found of each handler */
    EffectiveSettings(PrintStream out, HandlerCheck handlers) {
        this.out = out;
        this.handlers = handlers;
    }

    void print(Manifest manifest) {
        out.println("manifest: " + manifest.file() + " is valid");
        PulsarSettings pulsar = manifest.pulsar();
        out.println("pulsar:");
        out.println("  serviceUrl: " + pulsar.serviceUrl());
        out.println("  authentication: " + pulsar.authentication().map(EffectiveSettings::describe).orElse("none"));
        if (pulsar.serviceUrl().startsWith("pulsar+ssl://")) {
            out.println("  tls.trustCertsFile: "
                    + pulsar.tls().trustCertsFile().map(Object::toString).orElse("none (the JDK's trusted certificates)"));
            out.println("  tls.hostnameVerification: " + pulsar.tls().hostnameVerification());
        }
        out.println("http: " + manifest.http().bindAddress() + ":" + manifest.http().port()
                + " (/metrics, /livez, /readyz)");
        List<SubscriptionSpec> subscriptions = manifest.subscriptions();
        for (int i = 0; i < subscriptions.size(); i++) {
            print(manifest, subscriptions.get(i), "subscriptions[" + i + "]");
        }
    }

    private void print(Manifest manifest, SubscriptionSpec s, String path) {
        out.println("subscription " + s.name() + " (" + path + "):");
        out.println("  type: " + s.type().manifestName());
        if (s.topicsPattern().isPresent()) {
            out.println("  topicsPattern: " + s.topicsPattern().get());
        } else {
            out.println("  topics: " + String.join(", ", s.topics()));
        }
        Optional<HandlerFacts> facts = handlers.facts(s.name());
        out.println("  handler: " + facts.map(f -> f.className() + f.version().map(v -> " " + v).orElse(""))
                .orElse(s.handler().orElse("the one handler the JAR declares")));
        out.println("  jar: " + s.jar());
        out.println("  schema: " + s.schema().map(kind -> kind.manifestName() + " (declared)")
                .or(() -> facts.map(f -> SchemaKind.forMessageType(f.messageType()).manifestName()
                        + " (the handler takes " + f.messageType().getTypeName() + ")"))
                .orElse("from the handler's type"));
        out.println("  ackTimeout: " + s.ackTimeout().map(DurationText::format)
                .orElse("none (an unsettled message comes back only when the consumer disconnects)"));
        out.println("  retry: negative ack, redelivered at once (zero redelivery backoff)"
                + (s.type().countsRedeliveries() ? "" : "; on " + s.type().manifestName()
                        + " a negative ack rewinds every unacknowledged message"));
        String retryAfterLimit = s.ackTimeout()
                .map(timeout -> "a retryAfter of " + DurationText.format(timeout)
                        + " or more is refused: the ack timeout would fire first")
                .orElse("any retryAfter is held");
        out.println("  maxRetryDelay: " + s.maxRetryDelay().map(DurationText::format).orElse("not declared")
                + " (" + retryAfterLimit + ")");
        if (s.maxAttempts().isPresent()) {
            int attempts = s.maxAttempts().getAsInt();
            out.println("  maxRedeliverCount: " + (attempts - 1) + " (a failing message is handled at most "
                    + attempts + " times, then dead-lettered)");
            out.println("  deadLetterTopic: " + s.deadLetterTopic().orElseThrow());
            out.println("  deadLetterSubscription: " + s.effectiveDeadLetterSubscription().orElseThrow()
                    + " (created with the topic, so dead letters are kept until read)");
        } else {
            out.println("  maxRedeliverCount: none: no dead-letter topic (a failing message is retried forever)");
        }
        out.println("  concurrency: " + s.concurrency());
        out.println("  receiverQueueSize: " + s.receiverQueueSize());
        out.println("  initialPosition: " + s.initialPosition().name().toLowerCase(Locale.ROOT));
        out.println("  handlerTimeout: " + DurationText.format(s.handlerTimeout()));
        out.println("  batchIndexAck: " + s.batchIndexAck());
        out.println("  acknowledgements: " + (s.acknowledgesAtOnce()
                ? "sent at once (batchIndexAck with a dead-letter cap)"
                : "grouped, sent every 100ms"));
        if (s.config().isEmpty()) {
            out.println("  config: none");
        } else {
            out.println("  config:");
            new TreeMap<>(s.config()).forEach((key, value) -> out.println("    " + key + ": "
                    + (manifest.fromEnvironment(path + ".config." + key) ? REDACTED + " (from the environment)"
                            : value)));
        }
    }

    private static String describe(PulsarSettings.Authentication authentication) {
        if (authentication instanceof PulsarSettings.Token token) {
            return "token " + token.token();
        }
        PulsarSettings.OAuth2 oauth2 = (PulsarSettings.OAuth2) authentication;
        return "oauth2 client credentials " + oauth2.credentialsUrl() + ", issuerUrl " + oauth2.issuerUrl()
                + oauth2.audience().map(audience -> ", audience " + audience).orElse("")
                + oauth2.scope().map(scope -> ", scope " + scope).orElse("");
    }
}
