package dev.settle.runtime.cli;

import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.driver.SubscriptionDriver;
import dev.settle.runtime.isolation.FunctionJarScan;
import dev.settle.runtime.isolation.LoadedFunction;
import dev.settle.runtime.isolation.LoadedHandler;
import dev.settle.runtime.manifest.AdminSettings;
import dev.settle.runtime.manifest.BatchLimits;
import dev.settle.runtime.manifest.BreakerSettings;
import dev.settle.runtime.manifest.CommitBatch;
import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.OutputOptions;
import dev.settle.runtime.manifest.PulsarSettings;
import dev.settle.runtime.manifest.SchemaKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Prints what Pulsar will actually get from a valid manifest, subscription by subscription, in the Pulsar
 * client's own terms, with every default filled in. Secrets print as {@code [REDACTED]}; so does every
 * {@code config} value that came from a {@code ${...}} substitution, because the environment is where deployments
 * put secrets, while a value written in the manifest is already visible to whoever reads it.
 */
final class EffectiveSettings {
    private static final String REDACTED = "[REDACTED]";

    private final PrintStream out;
    private final PrintStream warnings;

    /** @param warnings where what is valid but probably not meant is said */
    EffectiveSettings(PrintStream out, PrintStream warnings) {
        this.out = out;
        this.warnings = warnings;
    }

    void print(Deployment deployment) {
        functions = deployment;
        print(
                deployment.manifest(),
                spec -> spec.handler().function() ? Optional.empty() : Optional.of(deployment.handler(spec.name())),
                " is valid");
    }

    /** Where the functions of a checked deployment are found; null for --skip-jar-check. */
    private Deployment functions;

    /** A manifest whose handler JARs were not opened ({@code validate --skip-jar-check}), saying so throughout. */
    void printUnchecked(Manifest manifest) {
        print(manifest, spec -> Optional.empty(), " is valid; its handler JARs were not checked (--skip-jar-check)");
    }

    private void print(
            Manifest manifest, Function<SubscriptionSpec, Optional<LoadedHandler>> handlers, String verdict) {
        out.println("manifest: " + manifest.file() + verdict);
        PulsarSettings pulsar = manifest.pulsar();
        out.println("pulsar:");
        out.println("  serviceUrl: " + pulsar.serviceUrl());
        out.println("  authentication: "
                + pulsar.authentication().map(EffectiveSettings::describe).orElse("none"));
        if (pulsar.serviceUrl().startsWith("pulsar+ssl://")) {
            out.println("  tls.trustCertsFile: "
                    + pulsar.tls()
                            .trustCertsFile()
                            .map(Object::toString)
                            .orElse("none (the JDK's trusted certificates)"));
            out.println("  tls.hostnameVerification: " + pulsar.tls().hostnameVerification());
            out.println("  tls.allowInsecureConnection: " + pulsar.tls().allowInsecureConnection());
        }
        out.println("http: " + manifest.http().bindAddress() + ":"
                + manifest.http().port() + " (/metrics, /livez, /readyz)");
        out.println("startup.timeout: " + DurationText.format(manifest.startup().timeout())
                + " (/livez fails if the handlers' open() takes longer)");
        out.println("shutdown.grace: " + DurationText.format(manifest.shutdown().grace())
                + " (in-flight handler calls, then the handlers' close, may run this long after SIGTERM)");
        if (manifest.tracing()) {
            out.println("tracing: true (a span per handling, exported as the OTEL_* variables say)");
        }
        manifest.admin()
                .ifPresent(admin -> out.println("admin: " + admin.bindAddress() + ":" + admin.port()
                        + " (handler uploads, bearer token [REDACTED]; data in " + admin.dataDir()
                        + "; JARs up to " + admin.maxJarSize() + " bytes)"
                        + (admin.codeStore() == AdminSettings.CodeStore.PULSAR
                                ? "; code kept in Pulsar: packages and records in "
                                        + admin.codeNamespace().orElseThrow() + ", read by every replica"
                                : "")));
        List<SubscriptionSpec> subscriptions = manifest.subscriptions();
        for (int i = 0; i < subscriptions.size(); i++) {
            SubscriptionSpec spec = subscriptions.get(i);
            print(manifest, spec, "subscriptions[" + i + "]", handlers.apply(spec));
        }
    }

    private void print(Manifest manifest, SubscriptionSpec s, String path, Optional<LoadedHandler> loaded) {
        out.println("subscription " + s.name() + " (" + path + "):");
        out.println("  type: " + s.type().manifestName());
        if (s.topics().pattern().isPresent()) {
            out.println("  topicsPattern: " + s.topics().pattern().get());
        } else {
            out.println("  topics: " + String.join(", ", s.topics().names()));
        }
        Optional<LoadedFunction> function = functions == null ? Optional.empty() : functions.function(s.name());
        if (function.isPresent()) {
            printFunction(s, path, function.get());
        } else if (loaded.isPresent()) {
            LoadedHandler handler = loaded.get();
            out.println("  handler: " + handler.className()
                    + handler.version().map(v -> " " + v).orElse(""));
            out.println("  jar: " + s.handler().jar());
            out.println("  schema: "
                    + s.handler()
                            .schema()
                            .map(kind -> kind.manifestName() + " (declared)")
                            .orElseGet(() -> takenSchema(handler.messageType())));
            if (handler.isBatch()) {
                BatchLimits limits = s.batchLimits();
                out.println("  batch: maxMessages " + limits.maxMessages() + ", maxBytes " + limits.maxBytes()
                        + ", maxWait " + DurationText.format(limits.maxWait())
                        + " (a BatchHandler: one call per batch, an outcome per message; concurrency counts batches)");
            } else if (s.batch().isPresent()) {
                out.println("  batch: ignored (" + handler.className() + " is a Handler, called with one message at"
                        + " a time)");
            }
        } else {
            out.println((s.handler().function() ? "  function: " : "  handler: ")
                    + s.handler().className().orElse("the one its JAR declares")
                    + " (NOT CHECKED: --skip-jar-check, the JAR was not opened)");
            out.println("  jar: "
                    + s.handler()
                            .fromPackage()
                            .map(ref -> ref + " (a Pulsar package; NOT CHECKED: not fetched)")
                            .orElse(s.handler().jar() + " (NOT CHECKED: not looked for)"));
            out.println("  schema: "
                    + s.handler()
                            .schema()
                            .map(kind -> kind.manifestName() + " (declared; NOT CHECKED against the handler's type)")
                            .orElse("the handler's (NOT CHECKED: its type is known only from its JAR)"));
        }
        if (!s.onException().isEmpty()) {
            out.println("  onException (first match wins, else a failure):");
            s.onException().forEach(rule -> out.println("    " + rule.type() + ": " + rule.describeOutcome()));
        }
        Optional<Duration> ackTimeout = s.consumer().ackTimeout();
        out.println("  ackTimeout: "
                + ackTimeout
                        .map(DurationText::format)
                        .orElse("none (an unsettled message comes back only when the consumer disconnects)"));
        out.println("  retry: negative ack, redelivered at once (zero redelivery backoff)"
                + (s.type().countsRedeliveries()
                        ? ""
                        : "; on " + s.type().manifestName() + " a negative ack rewinds every unacknowledged message"));
        String retryAfterLimit = ackTimeout
                .map(timeout -> "a retryAfter of " + DurationText.format(timeout)
                        + " or more is refused: the ack timeout would fire first")
                .orElse("any retryAfter is held");
        out.println("  maxRetryDelay: "
                + s.retries().maxRetryDelay().map(DurationText::format).orElse("not declared") + " (" + retryAfterLimit
                + ")");
        out.println("  failureBackoff: "
                + s.retries()
                        .failureBackoff()
                        .map(backoff -> DurationText.format(backoff.initial()) + " x " + number(backoff.multiplier())
                                + " up to " + DurationText.format(backoff.max()))
                        .orElse("none (a failed message comes back at once)"));
        out.println("  failures: " + FailureSchedule.describe(s));
        out.println("  order: " + order(s));
        s.retries()
                .durableDelays()
                .ifPresent(delays -> out.println("  durableDelays: a retryAfter or failure backoff of "
                        + DurationText.format(delays.after()) + " or more waits in " + delays.topic()
                        + " (a copy delivered when it ends, the original acknowledged with it; survives a crash;"
                        + " settle_durable_delays_published_total, settle_durable_delays_pending); shorter ones are"
                        + " held in the process"));
        if (s.deadLetter().isPresent()) {
            DeadLetter deadLetter = s.deadLetter().get();
            out.println("  maxRedeliverCount: " + deadLetter.maxRedeliverCount() + " (a failing message is handled"
                    + " at most " + deadLetter.maxAttempts() + " times, then dead-lettered)");
            out.println("  deadLetterTopic: " + deadLetter.topic());
            out.println("  deadLetterSubscription: "
                    + deadLetter
                            .initialSubscription()
                            .map(name -> name + " (created with the topic, so dead letters are kept until read)")
                            .orElse("none (dead letters are kept only once a subscription exists)"));
            deadLetter
                    .hold()
                    .ifPresent(held -> out.println("  onCap: hold (a capped message waits in " + held.topic()
                            + " until another generation of the code serves every key, then goes back to its topic, at most "
                            + held.redrivePerSecond() + " a second; one the new code fails too is dead-lettered)"));
        } else {
            out.println("  maxRedeliverCount: none: no dead-letter topic (a failing message is retried forever)");
            warnings.println("settle: warning: subscription '" + s.name() + "' (" + path + ") has no dead-letter"
                    + " cap, so a message that keeps failing is retried forever; "
                    + "add maxAttempts and deadLetterTopic to set it aside after a number of attempts");
        }
        out.println("  concurrency: " + s.concurrency());
        OutputOptions output = s.outputs();
        out.println("  maxPendingOutputs: " + output.maxPendingOutputs()
                + " (outputs not yet stored at once; a call's permit goes back when it returns)");
        out.println("  output producers: "
                + (output.batching() ? "batching, " + DurationText.format(output.batchingMaxDelay()) : "no batching")
                + ", compression " + output.compression().manifestName()
                + ", maxPendingMessages "
                + (output.maxPendingMessages() == 0 ? "client default" : String.valueOf(output.maxPendingMessages())));
        out.println("  receiverQueueSize: " + s.consumer().receiverQueueSize());
        out.println(
                "  initialPosition: " + s.consumer().initialPosition().name().toLowerCase(Locale.ROOT));
        out.println("  handlerTimeout: " + DurationText.format(s.handlerTimeout())
                + " (a call's lease from its start: past it, interrupted and settled as a timeout failure; "
                + (s.handler().function()
                        ? "a function cannot extend it)"
                        : s.guarantee() == Guarantee.EXACTLY_ONCE
                                ? "Delivery.extend up to it, no further: the transaction's timeout is built from it)"
                                : "Delivery.extend moves it)"));
        out.println("  batchIndexAck: " + s.consumer().batchIndexAck());
        out.println("  guarantee: "
                + (s.guarantee() == Guarantee.EXACTLY_ONCE
                        ? "exactly-once (each delivery's outputs, dead letter and acknowledgement in one Pulsar transaction)"
                        : "at-least-once"));
        if (s.guarantee() == Guarantee.EXACTLY_ONCE) {
            out.println("  commitBatch: " + describe(s.commitBatch()));
            out.println("  transactionTimeout: "
                    + DurationText.format(SubscriptionDriver.transactionTimeout(s))
                    + (s.transactionTimeout().isPresent()
                            ? " ("
                            : " (handlerTimeout " + DurationText.format(s.handlerTimeout()) + " + commitBatch.maxDelay "
                                    + DurationText.format(s.commitBatch().maxDelay()) + " + 30s; ")
                    + "a transaction not committed by then is aborted by the coordinator, its inputs come back)");
        }
        if (!s.breaker().equals(BreakerSettings.DEFAULT)) {
            // Said only when changed: at its default the breaker is on, as for every subscription.
            out.println("  breaker: " + describe(s.breaker()));
        }
        s.journal()
                .ifPresent(topic -> out.println("  journal: " + topic
                        + (s.journalPerHandling()
                                ? " (a record per handler call and per settled delivery"
                                : " (a record per settled delivery")
                        + ", no payload; settle trace reads it)"));
        out.println("  acknowledgements: "
                + (s.guarantee() == Guarantee.EXACTLY_ONCE
                        ? "in each transaction, sent with its commit"
                        : s.acknowledgesAtOnce()
                                ? "sent at once (batchIndexAck with a dead-letter cap)"
                                : "grouped, sent every 100ms"));
        if (s.config().isEmpty()) {
            out.println("  config: none");
        } else {
            out.println("  config:");
            new TreeMap<>(s.config())
                    .forEach((key, value) -> out.println("    " + key + ": "
                            + (manifest.fromEnvironment(path + ".config." + key)
                                    ? REDACTED + " (from the environment)"
                                    : value)));
        }
    }

    private static String describe(BreakerSettings breaker) {
        if (!breaker.enabled()) {
            return "off (every failure counts an attempt, also during a dependency's outage)";
        }
        return "on, opens when " + breaker.minKeys() + " keys fail with a dependency's cause within "
                + DurationText.format(breaker.window()) + ", probes at most every "
                + DurationText.format(breaker.maxProbeInterval())
                + (breaker.exceptions().isEmpty() ? "" : ", also on " + String.join(", ", breaker.exceptions()));
    }

    /** At one delivery per transaction the delay has nothing to wait for, so it is shown as unused. */
    private static String describe(CommitBatch batch) {
        if (!batch.batches()) {
            return "maxDeliveries 1, maxDelay unused (one transaction per delivery)";
        }
        String delay = DurationText.format(batch.maxDelay());
        return "maxDeliveries " + batch.maxDeliveries() + ", maxDelay " + delay + " (a transaction takes the"
                + " deliveries that begin within " + delay + " of its first, up to " + batch.maxDeliveries()
                + ", and commits them together once each is settled)";
    }

    private void printFunction(SubscriptionSpec s, String path, LoadedFunction function) {
        out.println("  function: " + function.className()
                + function.version().map(v -> " " + v).orElse("") + " ("
                + (function.pulsarFunction()
                        ? "org.apache.pulsar.functions.api.Function"
                        : function.windowFunction()
                                ? "org.apache.pulsar.functions.api.WindowFunction"
                                : "java.util.function.Function")
                + "<" + function.inputType().getTypeName() + ", "
                + function.outputType().getTypeName() + ">)");
        out.println("  jar: " + s.handler().jar());
        s.function()
                .window()
                .ifPresent(window -> out.println("  windowConfig: " + window.describe()
                        + ", in processing time; a window's inputs are acknowledged once its output is durable"));
        Class<?> input = s.function().window().isPresent()
                ? function.windowInput().orElse(function.inputType())
                : function.inputType();
        if (s.function().inputSerdes().isEmpty()) {
            out.println("  schema: "
                    + s.handler()
                            .schema()
                            .map(kind -> kind.manifestName() + " (declared)")
                            .orElseGet(
                                    () -> takenSchema(input).replace("(the handler takes ", "(the function takes ")));
        } else {
            out.println("  schema: bytes, each topic's payloads decoded by its SerDe:");
            new TreeMap<>(s.function().inputSerdes())
                    .forEach((topic, serde) -> out.println("    " + topic + ": " + serde));
        }
        out.println("  output: "
                + s.function()
                        .output()
                        .map(topic -> topic + " (the input is acknowledged once the output is durable), "
                                + s.function()
                                        .outputSerde()
                                        .map(serde -> "schema bytes, serialised by SerDe " + serde)
                                        .orElseGet(() -> "schema "
                                                + s.function()
                                                        .outputSchema()
                                                        .map(kind -> kind.manifestName() + " (declared)")
                                                        .orElseGet(
                                                                () -> SchemaKind.forMessageType(function.outputType())
                                                                        .manifestName())))
                        .orElse("none (return values are dropped; context.publish still works)"));
        if (s.function().output().isPresent()) {
            out.println("  inputProperties: "
                    + (s.function().inputProperties()
                            ? "true (outputs carry __pfn_input_topic__ and __pfn_input_msg_id__, as Pulsar Functions'"
                                    + " do)"
                            : "false"));
        }
        out.println("  instance: " + s.function().instanceId() + " of "
                + s.function().numInstances() + " (context.getInstanceId, getNumInstances)");
        if (!s.function().secrets().isEmpty()) {
            out.println("  secrets:");
            new TreeMap<>(s.function().secrets())
                    .forEach((name, variable) -> out.println("    " + name + ": from $" + variable + " [REDACTED]"));
        }
        out.println("  state: "
                + s.function()
                        .state()
                        .map(topic -> topic + " (a compacted topic: read back at start, each change written with the"
                                + " outputs; at-least-once, so a redelivered input changes a counter again)")
                        .orElse("none (putState, incrCounter and the like throw)"));
        for (var call : function.unsupportedCalls()) {
            if (s.function().state().isPresent() && FunctionJarScan.STATE.contains(call.method())) {
                continue;
            }
            if (!call.certain()) {
                warnings.println("settle: warning: subscription '" + s.name() + "' (" + path + "): "
                        + function.className() + " reaches " + String.join(", ", call.callers()) + " in "
                        + s.handler().jar().getFileName() + ", which calls Context." + call.method()
                        + "; Settle does not support it (" + call.advice() + "). If that call happens, the message"
                        + " fails with UnsupportedOperationException naming the method");
            }
        }
        for (String api : function.scan().bundledApis()) {
            warnings.println("settle: warning: subscription '" + s.name() + "' (" + path + "): "
                    + s.handler().jar().getFileName() + " bundles its own copy of " + api + "; Settle loads the"
                    + " runtime's (Pulsar " + org.apache.pulsar.PulsarVersion.getVersion()
                    + ") instead, so that the function and the runtime share one type."
                    + " Declare pulsar-functions-api as provided in the function's build");
        }
    }

    /** A multiplier as written: {@code 2}, not {@code 2.0}; {@code 1.5} as is. */
    private static String number(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }

    private static String describe(PulsarSettings.Authentication authentication) {
        if (authentication instanceof PulsarSettings.Token token) {
            return "token " + token.token();
        }
        if (authentication instanceof PulsarSettings.TokenFile file) {
            return "token [REDACTED] from " + file.file() + " (read again when the file changes)";
        }
        if (authentication instanceof PulsarSettings.ClientCertificate certificate) {
            return "tls client certificate " + certificate.certFile() + ", key " + certificate.keyFile();
        }
        if (authentication instanceof PulsarSettings.Plugin plugin) {
            return "authPlugin " + plugin.className() + ", authParams "
                    + (plugin.params().reveal().isEmpty() ? "none" : plugin.params());
        }
        PulsarSettings.OAuth2 oauth2 = (PulsarSettings.OAuth2) authentication;
        return "oauth2 client credentials " + oauth2.credentialsUrl() + ", issuerUrl " + oauth2.issuerUrl()
                + oauth2.audience().map(audience -> ", audience " + audience).orElse("")
                + oauth2.scope().map(scope -> ", scope " + scope).orElse("");
    }

    /**
     * The schema a handler's type gets when the manifest declares none. A String handler presents none to the broker
     * and decodes the bytes itself (driver.Schemas), so that it reads topics of plain bytes too.
     */
    private static String takenSchema(Class<?> type) {
        String takes = " (the handler takes " + type.getTypeName() + ")";
        return type == String.class
                ? "none registered, payloads read as UTF-8" + takes
                : SchemaKind.forMessageType(type).manifestName() + takes;
    }

    /** The effective {@code order}: whether a retry holds its key's later messages, and where that came from. */
    private static String order(SubscriptionSpec s) {
        String source = s.retries().order().isPresent() ? "" : ", " + s.type().manifestName() + "'s default";
        if (s.keyOrderedRetries()) {
            return "key" + source.replace(", ", " (") + (source.isEmpty() ? " (" : "; ")
                    + "a retried message holds its key's later messages in this runtime until it is settled, or for"
                    + " its delay + keyHoldTimeout "
                    + DurationText.format(s.retries().keyHoldTimeout()) + ")";
        }
        if (!s.type().countsRedeliveries()) {
            return "none (" + s.type().manifestName() + ": a retry rewinds every unacknowledged message)";
        }
        return "none" + source.replace(", ", " (") + (source.isEmpty() ? " (" : "; ")
                + "a retry lets its key's later messages pass it)";
    }
}
