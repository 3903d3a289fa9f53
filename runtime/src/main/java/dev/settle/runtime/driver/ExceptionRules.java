package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.ExceptionRule;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The subscription's {@code onException} list as the part in the pipeline's retry-or-delay slot: an exception the
 * code throws that a rule names becomes that rule's outcome ({@link ExceptionRulesPort}) before the settlement reads
 * it. No rules, no part.
 */
final class ExceptionRules implements Pipeline.RetryOrDelay {
    private final String subscription;
    private final List<ExceptionRule> rules;

    private ExceptionRules(String subscription, List<ExceptionRule> rules) {
        this.subscription = subscription;
        this.rules = List.copyOf(rules);
    }

    /** The part of {@code rules}; the slot's no-op when there are none. */
    static Pipeline.RetryOrDelay of(String subscription, List<ExceptionRule> rules) {
        return rules.isEmpty() ? Pipeline.RetryOrDelay.NONE : new ExceptionRules(subscription, rules);
    }

    @Override
    public HandlerPort around(HandlerPort next) {
        return ExceptionRulesPort.of(next, subscription, rules);
    }

    @Override
    public String describe() {
        return rules.stream()
                .map(rule -> rule.type() + " → " + rule.describeOutcome())
                .collect(Collectors.joining(", ", "onException [", "]"));
    }
}
