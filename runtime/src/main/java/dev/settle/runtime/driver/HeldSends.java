package dev.settle.runtime.driver;

import dev.settle.runtime.publish.HeldOutputs;
import dev.settle.runtime.publish.Outputs;
import dev.settle.runtime.publish.Publishes;
import java.util.IdentityHashMap;
import java.util.Map;
import org.apache.pulsar.client.api.Message;

/**
 * What one delivery published in one call of a batch handler at exactly-once (issue 47), held until the call's result
 * is known: {@link #send} sends it in the delivery's transaction when its outcome acknowledges it; otherwise it is
 * dropped unsent. A call that throws sends nothing, so a bisection's calls never add to what an earlier call of the
 * same delivery published. Thread-safe.
 */
final class HeldSends {
    /** Per outputs published to (one per subscription, as a rule), the messages held for them. Guarded by this. */
    private final Map<Outputs, HeldOutputs> held = new IdentityHashMap<>();

    /** Where a publish of this delivery through {@code to} goes while the call runs. */
    synchronized Publishes publishes(Outputs to) {
        return held.computeIfAbsent(to, HeldOutputs::new).publishes();
    }

    /** Sends every held message through {@code work}'s own sends: in its transaction, its commit waiting for them. */
    synchronized void send(UnitOfWork<Message<?>> work) {
        for (HeldOutputs outputs : held.values()) {
            outputs.sendThrough(work.outputs(outputs.to()));
        }
    }
}
