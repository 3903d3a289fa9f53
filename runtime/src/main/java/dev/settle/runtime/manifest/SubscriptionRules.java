package dev.settle.runtime.manifest;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.Node;

/**
 * The rules of a subscription entry that hold across its keys (docs/manifest.md, "Rules across settings"): each key's
 * own type, bounds and allowed values are its row in {@link ManifestKeys}; what one key means for another is here, one
 * method per rule or family of rules, each recording a problem at the key to change.
 */
final class SubscriptionRules {
    /** Keys that only a {@code function:} reads ({@code output:} of a handler is a mapping without a topic). */
    private static final List<String> FUNCTION_ONLY = List.of(
            "outputSchema",
            "secrets",
            "inputSerdes",
            "outputSerde",
            "inputProperties",
            "state",
            "instanceId",
            "numInstances",
            "windowConfig");

    private final NodeReader reader;

    SubscriptionRules(NodeReader reader) {
        this.reader = reader;
    }

    /** One of {@code topics} and {@code topicsPattern}, not both. */
    void checkTopicsOrPattern(NodeReader.Mapping s, Node node, String path) {
        if (s.has("topics") && s.has("topicsPattern")) {
            reader.problem(
                    s.get("topicsPattern").get(),
                    s.path("topicsPattern"),
                    "is set together with topics; give topics (a list of names) or topicsPattern (a regular"
                            + " expression), not both");
        } else if (!s.has("topics") && !s.has("topicsPattern")) {
            reader.problem(
                    node,
                    path + ".topics",
                    "is required; add topics (a list of names) or topicsPattern" + " (a regular expression)");
        }
    }

    /**
     * The dead-letter cap's rules, exactly-once's ({@link #checkExactlyOnceRules}: the home of any rule that refuses a
     * key beside {@code guarantee: exactly-once}), {@code commitBatch} and {@code transactionTimeout} only with
     * exactly-once, and the dead-letter options only with a dead-letter topic.
     */
    void checkGuaranteeAndDeadLetterOptions(
            NodeReader.Mapping s, SubscriptionKind type, Guarantee guarantee, boolean guaranteeReadable) {
        checkDeadLetterRules(s, type);
        if (guarantee == Guarantee.EXACTLY_ONCE) {
            checkExactlyOnceRules(s, type);
        } else if (guaranteeReadable || !s.has("guarantee")) {
            // A misspelt guarantee is reported at its own key; it is no reason to call these misplaced.
            for (String key : List.of("commitBatch", "transactionTimeout")) {
                if (s.has(key)) {
                    reader.problem(
                            s.get(key).get(),
                            s.path(key),
                            "is set while the guarantee is at-least-once" + (s.has("guarantee") ? "" : " (the default)")
                                    + ": " + key + (key.equals("commitBatch") ? " groups" : " bounds")
                                    + " exactly-once transactions; set guarantee: exactly-once or remove " + key);
                }
            }
        }
        for (String key : List.of("deadLetterSubscription", "deadLetterStackTrace", "onCap")) {
            if (s.has(key) && !s.has("deadLetterTopic")) {
                reader.problem(
                        s.get(key).get(),
                        s.path(key),
                        "is set without deadLetterTopic, so it has no effect; add deadLetterTopic and maxAttempts,"
                                + " or remove it");
            }
        }
    }

    /**
     * A written {@code transactionTimeout} must outlive a transaction's deliveries: it takes them for up to
     * {@code commitBatch.maxDelay}, each call may run {@code handlerTimeout}, and then their outputs are stored, their
     * inputs acknowledged and the commit made, in what is left ({@link SubscriptionSpec#MIN_COMMIT_MARGIN} at least).
     * A shorter one would see the coordinator abort transactions whose calls were still within their lease.
     */
    void checkTransactionTimeout(
            NodeReader.Mapping s, Optional<Duration> timeout, Duration handlerTimeout, CommitBatch commitBatch) {
        if (timeout.isEmpty()) {
            return;
        }
        Duration calls = handlerTimeout.plus(commitBatch.maxDelay());
        Duration least = calls.plus(SubscriptionSpec.MIN_COMMIT_MARGIN);
        if (timeout.get().compareTo(least) < 0) {
            reader.problem(
                    s.get("transactionTimeout").get(),
                    s.path("transactionTimeout"),
                    "must be at least " + DurationText.format(SubscriptionSpec.MIN_COMMIT_MARGIN)
                            + " longer than handlerTimeout + commitBatch.maxDelay ("
                            + DurationText.format(handlerTimeout) + " + "
                            + DurationText.format(commitBatch.maxDelay()) + " = " + DurationText.format(calls)
                            + "), was '" + DurationText.format(timeout.get())
                            + "': a transaction must outlive its deliveries' calls, then store their outputs and"
                            + " commit, or the coordinator aborts it while its calls are within their lease."
                            + " Lengthen transactionTimeout to " + DurationText.format(least)
                            + " or more, or shorten handlerTimeout");
        }
    }

    /** {@code redriveRate} paces the re-drive of held messages, which only {@code onCap: hold} has. */
    void checkRedriveRate(NodeReader.Mapping s, boolean hold) {
        if (s.has("redriveRate") && !hold) {
            reader.problem(
                    s.get("redriveRate").get(),
                    s.path("redriveRate"),
                    "is only used with onCap: hold (it paces the re-drive of held messages); add onCap: hold, or"
                            + " remove redriveRate");
        }
    }

    /** A delay the runtime holds must end before the client's ack-timeout timer brings the message back. */
    void checkMaxRetryDelay(NodeReader.Mapping s, Optional<Duration> ackTimeout, Optional<Duration> maxRetryDelay) {
        if (maxRetryDelay.isPresent()
                && ackTimeout.isPresent()
                && maxRetryDelay.get().compareTo(ackTimeout.get()) >= 0) {
            reader.problem(
                    s.get("maxRetryDelay").get(),
                    s.path("maxRetryDelay"),
                    "must be shorter than ackTimeout ("
                            + DurationText.format(ackTimeout.get()) + "), was '"
                            + DurationText.format(maxRetryDelay.get())
                            + "': the client's ack-timeout timer would bring the message back before the delay ends."
                            + " Shorten maxRetryDelay or lengthen ackTimeout");
        }
    }

    /**
     * {@code order: key} needs a type whose retries bring back one message (Shared, Key_Shared); {@code keyHoldTimeout}
     * is only read when retries keep key order.
     */
    void checkOrder(NodeReader.Mapping s, SubscriptionKind type, Optional<RetryOrder> order) {
        if (order.isPresent() && order.get() == RetryOrder.KEY && !type.countsRedeliveries()) {
            reader.problem(
                    s.get("order").get(),
                    s.path("order"),
                    "must not be 'key' on type " + type.manifestName() + ": a retry there rewinds every"
                            + " unacknowledged message, so a key's later messages come back behind it already."
                            + " Remove order, or use type Key_Shared (ordered by default) or Shared");
        }
        if (s.has("keyHoldTimeout") && order.orElseGet(() -> RetryOrder.defaultFor(type)) != RetryOrder.KEY) {
            reader.problem(
                    s.get("keyHoldTimeout").get(),
                    s.path("keyHoldTimeout"),
                    "is only used when retries keep key order, and this " + type.manifestName()
                            + " subscription's order is 'none'. Remove keyHoldTimeout, or set order: key (Shared) or"
                            + " use type Key_Shared");
        }
    }

    /**
     * Durable delays rest on the broker's delayed delivery, which only Shared and Key_Shared subscriptions have, and on
     * a delay topic told apart from the consumed ones by name; {@code durableAfter} is their threshold alone.
     */
    void checkDurableDelays(NodeReader.Mapping s, SubscriptionKind type, boolean on, boolean pattern) {
        if (on && !type.countsRedeliveries()) {
            reader.problem(
                    s.get("durableDelays").get(),
                    s.path("durableDelays"),
                    "must not be true on type " + type.manifestName() + ": the broker delivers a delayed message at"
                            + " once on Exclusive and Failover subscriptions, so the delay would be lost. Use type"
                            + " Shared or Key_Shared, or remove durableDelays");
        }
        if (on && pattern) {
            reader.problem(
                    s.get("durableDelays").get(),
                    s.path("durableDelays"),
                    "must not be true with topicsPattern: the delay topic <name>-delay could match the pattern and be"
                            + " read as input. List the topics under topics, or remove durableDelays");
        }
        if (s.has("durableAfter") && !on) {
            reader.problem(
                    s.get("durableAfter").get(),
                    s.path("durableAfter"),
                    "is only used with durableDelays: true (it is the shortest wait kept on the delay topic); add"
                            + " durableDelays: true, or remove durableAfter");
        }
    }

    /** The onException rules' delays, checked after the dead-letter topic (problems keep their order). */
    void checkRuleDelaysAgainstAckTimeout(
            NodeReader.Mapping s, Optional<Duration> ackTimeout, List<ExceptionRule> onException) {
        for (int i = 0; i < onException.size(); i++) {
            ExceptionRule rule = onException.get(i);
            if (rule.delay().isPresent()
                    && ackTimeout.isPresent()
                    && rule.delay().get().compareTo(ackTimeout.get()) >= 0) {
                String rulePath = s.path("onException") + "[" + i + "].outcome";
                reader.problem(
                        s.get("onException").get(),
                        rulePath,
                        "must hold the message for less than ackTimeout (" + DurationText.format(ackTimeout.get())
                                + "), was '" + rule.describeOutcome() + "': the client's ack-timeout timer would"
                                + " bring the message back first. Shorten the delay or lengthen ackTimeout");
            }
        }
    }

    /** A handler or a function, not both; the function-only keys only with a function. */
    void checkHandlerOrFunction(NodeReader.Mapping s) {
        if (s.has("handler") && s.has("function")) {
            reader.problem(
                    s.get("function").get(),
                    s.path("function"),
                    "is set together with handler; name a Settle handler (handler) or a Pulsar Function"
                            + " (function), not both");
        }
        if (s.has("batch") && s.has("function")) {
            reader.problem(
                    s.get("batch").get(),
                    s.path("batch"),
                    "is set for a Pulsar Function, which is called with one message at a time; batches are for a"
                            + " Settle BatchHandler (handler:). Remove batch, or write the code as a BatchHandler");
        }
        if (!s.has("function")) {
            for (String key : FUNCTION_ONLY) {
                s.get(key)
                        .ifPresent(value -> reader.problem(
                                value,
                                s.path(key),
                                "is read only for a Pulsar Function; add function: <class>, or remove " + key
                                        + (key.equals("secrets")
                                                ? " (a handler reads its settings from config)"
                                                : key.equals("windowConfig")
                                                        ? " (a handler is called with each message)"
                                                        : " (a handler publishes through HandlerContext.publisher)")));
            }
        }
    }

    private void checkDeadLetterRules(NodeReader.Mapping s, SubscriptionKind type) {
        boolean cap = s.has("maxAttempts");
        boolean dlq = s.has("deadLetterTopic");
        if (cap && !dlq) {
            reader.problem(
                    s.get("maxAttempts").get(),
                    s.path("maxAttempts"),
                    "is set without deadLetterTopic;"
                            + " a capped message must go somewhere: add deadLetterTopic, or remove maxAttempts");
        } else if (dlq && !cap) {
            reader.problem(
                    s.get("deadLetterTopic").get(),
                    s.path("deadLetterTopic"),
                    "is set without maxAttempts;"
                            + " add maxAttempts (deliveries before a failing message is dead-lettered, at least 2), or"
                            + " remove deadLetterTopic");
        }
        if ((cap || dlq) && !type.countsRedeliveries()) {
            String key = cap ? "maxAttempts" : "deadLetterTopic";
            Node at = s.get("type").orElse(s.get(key).get());
            String article = type == SubscriptionKind.EXCLUSIVE ? "an " : "a ";
            reader.problem(
                    at,
                    s.path("type"),
                    article + type.manifestName() + " subscription cannot have a"
                            + " dead-letter cap: the broker keeps no redelivery count on Exclusive and Failover subscriptions"
                            + " (every message arrives with count 0), so the cap would never fire. Use Shared or Key_Shared,"
                            + " or remove maxAttempts and deadLetterTopic");
        }
    }

    /**
     * What exactly-once cannot keep (docs/exactly-once.md, "Limits"). Settle writes every dead letter of an
     * exactly-once subscription, in a transaction with the input's acknowledgement, and its consumer has no dead-letter
     * policy of its own (the client's letters are uncaused and outside any transaction); an ack timeout gives Settle no
     * cause to write one with, so a message left without outcome would come back past the cap for ever: a cap beside an
     * ack timeout is refused. A window's output is published when the window fires, outside the transactions of the
     * deliveries it holds, so {@code windowConfig} is refused. On Exclusive and Failover a negative acknowledgement
     * rewinds every unacknowledged message, so one failure would abort and run again every delivery whose transaction
     * is open beside it; only Shared and Key_Shared are built and tested.
     */
    private void checkExactlyOnceRules(NodeReader.Mapping s, SubscriptionKind type) {
        Node at = s.get("guarantee").get();
        if (s.has("ackTimeout") && s.has("maxAttempts") && s.has("deadLetterTopic")) {
            reader.problem(
                    s.get("ackTimeout").get(),
                    s.path("ackTimeout"),
                    "cannot be set with guarantee: exactly-once and a dead-letter cap: at exactly-once Settle"
                            + " writes every dead letter, in a transaction, and the Pulsar client none, so a message"
                            + " whose ack timeout runs out on its last attempt would come back past the cap for ever,"
                            + " never dead-lettered. Remove ackTimeout (a delivery that"
                            + " gives no outcome then stays unacknowledged until its consumer disconnects; failures,"
                            + " retries and refused delays are dead-lettered by Settle, in a transaction), remove"
                            + " maxAttempts and deadLetterTopic, or use guarantee: at-least-once");
        }
        if (s.has("windowConfig") && s.has("function")) {
            // A handler's windowConfig is refused on its own (read only for a function): one problem is enough.
            reader.problem(
                    s.get("windowConfig").get(),
                    s.path("windowConfig"),
                    "cannot be set with guarantee: exactly-once: a window's output is published when the window"
                            + " fires, outside the transactions of the messages it holds, so an abort or a restart"
                            + " can publish it twice, and a window open longer than the transaction timeout"
                            + " (transactionTimeout, by default handlerTimeout + 30s) would see each message's transaction"
                            + " expire before it fires."
                            + " Remove windowConfig, or set guarantee: at-least-once (a window's inputs are then"
                            + " acknowledged once its output is stored)");
        }
        if (!type.countsRedeliveries()) {
            reader.problem(
                    at,
                    s.path("guarantee"),
                    "exactly-once runs on Shared and Key_Shared subscriptions only, was type '"
                            + type.manifestName() + "': on Exclusive and Failover a failure's negative"
                            + " acknowledgement rewinds every unacknowledged message, running again the deliveries"
                            + " whose transactions are open beside it. Use Key_Shared (keys stay in order) or"
                            + " Shared, or guarantee: at-least-once");
        }
    }

    void checkNotConsumed(
            NodeReader.Mapping s, TopicName dlq, List<TopicName> topics, Optional<Pattern> topicsPattern) {
        Node at = s.get("deadLetterTopic").get();
        String full = dlq.toString();
        for (int i = 0; i < topics.size(); i++) {
            if (topics.get(i).toString().equals(full)) {
                reader.problem(
                        at,
                        s.path("deadLetterTopic"),
                        "'" + full + "' is also consumed by this subscription"
                                + " (topics[" + i
                                + "]), so dead letters would be handled again; use a topic of its own,"
                                + " such as '" + full + "-dlq'");
                return;
            }
        }
        if (topicsPattern.isPresent() && topicsPattern.get().matcher(full).matches()) {
            reader.problem(
                    at,
                    s.path("deadLetterTopic"),
                    "'" + full + "' matches this subscription's topicsPattern '"
                            + topicsPattern.get().pattern()
                            + "', so dead letters would be handled again; use a name the"
                            + " pattern does not match");
        }
    }

    /**
     * A window's inputs stay unacknowledged until it is published: the ack timeout must not bring them back first, and
     * a count window must fit in {@code maxPendingOutputs}, or receiving would stop before the window fills.
     */
    void checkWindow(
            NodeReader.Mapping s, WindowSettings window, Optional<Duration> ackTimeout, int maxPendingOutputs) {
        Node node = s.get("windowConfig").get();
        String path = s.path("windowConfig");
        long waiting = Math.max(window.length(), window.slidingInterval());
        if (window.byCount() && waiting > maxPendingOutputs) {
            reader.problem(
                    node,
                    path,
                    "holds up to " + waiting + " messages unacknowledged, more than maxPendingOutputs ("
                            + maxPendingOutputs + "), so receiving would stop before the window fills; raise"
                            + " maxPendingOutputs to at least " + waiting + " or shorten the window");
        }
        Duration longest = Duration.ofMillis(window.length() + window.slidingInterval());
        if (!window.byCount() && ackTimeout.isPresent() && ackTimeout.get().compareTo(longest) <= 0) {
            reader.problem(
                    node,
                    path,
                    "holds a message unacknowledged for up to " + DurationText.format(longest)
                            + " (window length plus sliding interval), and ackTimeout ("
                            + DurationText.format(ackTimeout.get()) + ") would bring it back first; lengthen"
                            + " ackTimeout beyond " + DurationText.format(longest) + " or remove it");
        }
    }
}
