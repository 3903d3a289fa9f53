package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.ExceptionRule;
import dev.settle.sdk.Outcome;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A subscription's {@code onException} list in front of its port: an exception the handler or function throws
 * (or completes its outcome with) that is an instance of a listed type becomes that entry's outcome instead of a
 * failure; the first matching entry wins. Types are matched by name along the exception's class hierarchy, so the
 * rule holds whichever loader the exception class came from. A payload that cannot be decoded and an output that
 * was not published durably, and a record the code marked failed, are never mapped: none is an exception of the
 * code that a rule could mean.
 */
public final class ExceptionRulesPort implements HandlerPort {
    private static final Logger log = LoggerFactory.getLogger(ExceptionRulesPort.class);

    private final HandlerPort port;
    private final String subscription;
    private final List<ExceptionRule> rules;
    private final Set<String> logged = ConcurrentHashMap.newKeySet();

    private ExceptionRulesPort(HandlerPort port, String subscription, List<ExceptionRule> rules) {
        this.port = port;
        this.subscription = subscription;
        this.rules = List.copyOf(rules);
    }

    /** {@code port} with the rules in front; {@code port} itself when there are none. */
    public static HandlerPort of(HandlerPort port, String subscription, List<ExceptionRule> rules) {
        return rules.isEmpty() ? port : new ExceptionRulesPort(port, subscription, rules);
    }

    @Override
    public Schema<?> schema() {
        return port.schema();
    }

    @Override
    public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) throws Exception {
        CompletionStage<Outcome> outcome;
        try {
            outcome = port.handle(work);
        } catch (Exception e) {
            outcome = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Outcome> done = outcome.toCompletableFuture();
        if (done.isDone() && !done.isCompletedExceptionally()) {
            return done;
        }
        return done.handle((settled, error) -> {
                    if (error == null) {
                        return CompletableFuture.completedFuture(settled);
                    }
                    Throwable cause =
                            error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
                    Outcome mapped = map(cause);
                    // Printable: thenCompose wraps it in a CompletionException, whose constructor reads its text.
                    return mapped == null
                            ? CompletableFuture.<Outcome>failedFuture(PrintableThrowable.of(cause))
                            : CompletableFuture.completedFuture(mapped);
                })
                .thenCompose(stage -> stage);
    }

    /** The outcome the first matching rule gives, or null for a failure. */
    Outcome map(Throwable error) {
        if (error instanceof VirtualMachineError // a function's context.fatal among them: never mapped to an outcome
                || error instanceof PayloadDecodeException
                || error instanceof OutputNotDurableException
                || error instanceof RecordFailedException) {
            return null;
        }
        for (ExceptionRule rule : rules) {
            if (isA(error.getClass(), rule.type())) {
                if (logged.add(error.getClass().getName())) {
                    log.info(
                            "subscription '{}': {} is settled as {} (onException {}); said once per type",
                            subscription,
                            error.getClass().getName(),
                            rule.describeOutcome(),
                            rule.type());
                }
                return switch (rule.outcome()) {
                    case DROP -> Outcome.drop();
                    case RETRY -> Outcome.retry();
                    case RETRY_AFTER -> Outcome.retryAfter(rule.delay().get());
                };
            }
        }
        return null;
    }

    private static boolean isA(Class<?> type, String name) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            if (c.getName().equals(name)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return port.toString();
    }
}
