package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.DeadLetter;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.pulsar.client.api.Message;

/**
 * A subscription's message path as fixed, named slots, in the order a delivery passes them (docs/design.md, "The
 * pipeline"): key hold → canary routing → batching → lease/timeout → handler → breaker observation → retry or delay →
 * cap → hold-for-fix or dead letter → journal. Each slot is an interface whose defaults do nothing, and a slot with
 * nothing in it holds that no-op ({@code NONE}), never a null: the message path never asks whether a part is there.
 * A new settlement feature is a part in its slot, chosen here once when the subscription starts.
 *
 * <p>The slots in front of the settlement wrap the call ({@link CallPart}): a part returns the port it puts around the
 * next one, so a no-op costs nothing per message (it returns that port itself). The outermost is the key hold; the
 * innermost, right around the handler, the breaker's observation, so that on the way back the breaker sees what the
 * handler did before retry or delay turns a failure into an outcome. The cap and the last stop are the settlement's
 * ({@link Settlement} decides, {@link DeadLettering} writes the letter, with the cap it shares with this cap slot); the
 * journal records each delivery from its start to its settlement. Immutable.
 *
 * @param keyHold holds a delivery whose key waits for an earlier one's retry ({@link KeyOrderedRetries}), or none
 * @param canaryRouting sends some deliveries to a canary generation of the code: none here; while a ramp runs its
 *     router ({@code canary.GenerationRouter}) is swapped in as the code, where it sees each generation's own results
 * @param batching gathers deliveries into one call of a batch handler (not built yet: none)
 * @param lease bounds how long a call may hold its delivery (not built yet: none)
 * @param breaker observes each call's result for a circuit breaker (not built yet: none)
 * @param retryOrDelay turns a failure into a retry, a delay or a drop: the subscription's {@code onException} rules
 * @param cap when a delivery is on its last attempt
 * @param lastStop what becomes of a delivery past the cap: its dead letter ({@link DeadLettering}; a hold-for-fix part
 *     comes here)
 * @param journal records each delivery, from its start to its settlement: its trace, its settlement journal's record
 */
record Pipeline(
        KeyHold keyHold,
        CanaryRouting canaryRouting,
        Batching batching,
        Lease lease,
        Breaker breaker,
        RetryOrDelay retryOrDelay,
        Cap cap,
        Part lastStop,
        Journal journal) {

    /** The slots, in the order a delivery passes them. */
    enum Slot {
        KEY_HOLD("key hold"),
        CANARY_ROUTING("canary routing"),
        BATCHING("batching"),
        LEASE("lease/timeout"),
        HANDLER("handler"),
        BREAKER("breaker observation"),
        RETRY_OR_DELAY("retry or delay"),
        CAP("cap"),
        LAST_STOP("hold-for-fix or dead letter"),
        JOURNAL("journal");

        private final String label;

        Slot(String label) {
            this.label = label;
        }

        String label() {
            return label;
        }
    }

    /** What fills a slot. */
    interface Part {
        /** What this part does, for the listing of a running subscription's parts; "none" for a no-op. */
        default String describe() {
            return "none";
        }
    }

    /** A slot in front of the settlement: its part wraps the call. */
    interface CallPart extends Part {
        /** The port calls go to through this part, {@code next} being the rest of the line; {@code next} for none. */
        default HandlerPort around(HandlerPort next) {
            return next;
        }
    }

    /**
     * Holds a delivery in the runtime while an earlier one of its key waits for its retry, spending no attempt
     * ({@link KeyOrderedRetries}): asked before a delivery starts, told once it is settled; it wraps no call.
     */
    interface KeyHold extends CallPart {
        KeyHold NONE = new KeyHold() {};

        /**
         * Whether {@code message} may start now; false when it was parked behind its key (its permit goes back, and
         * it comes again through {@link #nextReleased}: the key hold knows it when it is admitted again).
         */
        default boolean admit(Message<?> message, long receivedNanos) {
            return true;
        }

        /** {@code work} starts: what the key hold knows of it goes on it (how many of its key went before it). */
        default void started(UnitOfWork<Message<?>> work) {}

        /** The next parked message let go to be handled; null for none. */
        default KeyHolds.Parked<Message<?>> nextReleased() {
            return null;
        }

        /**
         * {@code work} was settled as {@code how} ({@code returned} being its outcome, null when it failed or gave
         * none), {@code lastAttempt} saying whether the cap was reached.
         */
        default void settled(UnitOfWork<Message<?>> work, Settled how, Outcome returned, boolean lastAttempt) {}

        /** Messages parked behind their key now. */
        default int heldBehindKey() {
            return 0;
        }

        /** How long the oldest key now held has been held, in nanoseconds; 0 for none. */
        default long oldestHoldNanos() {
            return 0;
        }

        /** The subscription stops: parked messages are let go of unhandled (they stay unacknowledged); which. */
        default List<Message<?>> abandon() {
            return List.of();
        }
    }

    /** Sends some deliveries to a canary generation of the code. */
    interface CanaryRouting extends CallPart {
        CanaryRouting NONE = new CanaryRouting() {};
    }

    /** Gathers deliveries into one call of a batch handler, each settled on its own. */
    interface Batching extends CallPart {
        Batching NONE = new Batching() {};
    }

    /** Bounds how long a call may hold its delivery. */
    interface Lease extends CallPart {
        Lease NONE = new Lease() {};
    }

    /** Sees what each call did (an outcome or a failure), before retry or delay does. */
    interface Breaker extends CallPart {
        Breaker NONE = new Breaker() {};
    }

    /** Turns what a call did into a retry, a delay or a drop before the settlement reads it. */
    interface RetryOrDelay extends CallPart {
        RetryOrDelay NONE = new RetryOrDelay() {};
    }

    /** When a delivery is on its last attempt, counted as the broker counts it (docs/design.md, section 1). */
    interface Cap extends Part {
        /** No cap: no attempt is the last. */
        Cap NONE = new Cap() {};

        /** Whether {@code attempt} (the redelivery count + 1) is the last one. */
        default boolean isLastAttempt(int attempt) {
            return false;
        }

        /** The cap of a dead-letter policy: {@code maxAttempts}. */
        static Cap of(DeadLetter policy) {
            return new Cap() {
                @Override
                public boolean isLastAttempt(int attempt) {
                    return policy.isLastAttempt(attempt);
                }

                @Override
                public String describe() {
                    return "maxAttempts " + policy.maxAttempts();
                }
            };
        }
    }

    /** Records each delivery: opened when it enters the path, closed once it is settled. */
    interface Journal extends Part {
        Journal NONE = new Journal() {};

        /** {@code work} enters the path, before any other slot: what it sends may go into its entry. */
        default void started(UnitOfWork<Message<?>> work) {}

        /** {@code port}, the code that runs it, begins its call on {@code work}. */
        default void called(UnitOfWork<Message<?>> work, HandlerPort port) {}

        /**
         * {@code delivery} is settled as {@code how}, {@code handlingNanos} after its call started; exactly-once, once
         * its transaction ended ({@link InFlight#isCommitted} says whether its acknowledgement was committed).
         */
        default void settled(InFlight delivery, Settled how, long handlingNanos) {}

        /**
         * Both journals in the one slot, {@code first} told first each time; a no-op one is left out, so two no-ops
         * are the no-op.
         */
        static Journal both(Journal first, Journal second) {
            if (second == NONE) {
                return first;
            }
            if (first == NONE) {
                return second;
            }
            return new Journal() {
                @Override
                public void started(UnitOfWork<Message<?>> work) {
                    first.started(work);
                    second.started(work);
                }

                @Override
                public void called(UnitOfWork<Message<?>> work, HandlerPort port) {
                    first.called(work, port);
                    second.called(work, port);
                }

                @Override
                public void settled(InFlight delivery, Settled how, long handlingNanos) {
                    first.settled(delivery, how, handlingNanos);
                    second.settled(delivery, how, handlingNanos);
                }

                @Override
                public String describe() {
                    return first.describe() + ", " + second.describe();
                }
            };
        }
    }

    public Pipeline {
        Objects.requireNonNull(keyHold, "keyHold");
        Objects.requireNonNull(canaryRouting, "canaryRouting");
        Objects.requireNonNull(batching, "batching");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(breaker, "breaker");
        Objects.requireNonNull(retryOrDelay, "retryOrDelay");
        Objects.requireNonNull(cap, "cap");
        Objects.requireNonNull(lastStop, "lastStop");
        Objects.requireNonNull(journal, "journal");
    }

    /**
     * The parts of {@code spec}'s subscription: its {@code onException} rules, its dead letters ({@code letters}, whose
     * cap is the cap slot's: one cap for both), journalled by {@code journal}.
     */
    static Pipeline of(SubscriptionSpec spec, DeadLettering<Message<?>> letters, Journal journal) {
        return of(spec, KeyHold.NONE, letters, journal);
    }

    /** As {@link #of(SubscriptionSpec, DeadLettering, Journal)}, with {@code keyHold} in its slot. */
    static Pipeline of(SubscriptionSpec spec, KeyHold keyHold, DeadLettering<Message<?>> letters, Journal journal) {
        return new Pipeline(
                keyHold,
                CanaryRouting.NONE,
                Batching.NONE,
                Lease.NONE,
                Breaker.NONE,
                ExceptionRules.of(spec.name(), spec.onException()),
                letters.cap(),
                letters,
                journal);
    }

    /** The line of ports a call goes through, {@code handler} innermost. */
    HandlerPort around(HandlerPort handler) {
        return keyHold.around(
                canaryRouting.around(batching.around(lease.around(retryOrDelay.around(breaker.around(handler))))));
    }

    /** Each slot and its part, in order, {@code handler} being the code that runs now: "slot: part". */
    List<String> parts(HandlerPort handler) {
        List<String> parts = new ArrayList<>();
        for (Slot slot : Slot.values()) {
            parts.add(slot.label() + ": " + part(slot, handler));
        }
        return List.copyOf(parts);
    }

    private String part(Slot slot, HandlerPort handler) {
        return switch (slot) {
            case KEY_HOLD -> keyHold.describe();
            case CANARY_ROUTING -> canaryRouting.describe();
            case BATCHING -> batching.describe();
            case LEASE -> lease.describe();
            case HANDLER -> handler.toString();
            case BREAKER -> breaker.describe();
            case RETRY_OR_DELAY -> retryOrDelay.describe();
            case CAP -> cap.describe();
            case LAST_STOP -> lastStop.describe();
            case JOURNAL -> journal.describe();
        };
    }
}
