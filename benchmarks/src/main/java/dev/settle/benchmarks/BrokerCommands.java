package dev.settle.benchmarks;

import dev.settle.testbroker.EmbeddedPulsar;
import dev.settle.testbroker.PulsarEndpoints;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The commands the embedded broker receives from its clients, counted by an interceptor installed on it
 * ({@link EmbeddedPulsar#countCommands}) and read, as {@link BrokerCpu}, when each of a child's markers arrives: a
 * run's counts are the difference between its first measured message and its last, so divided by the measured
 * messages they say what each message asked of the broker (acknowledgements, flow permits, redeliveries). "The broker
 * is the bottleneck" shown in numbers (issue 51).
 *
 * <p>Only connections made after {@link #install} are counted (a broker connection reads its interceptor once, as it
 * is made): every consumer the harness starts afterwards is.
 */
final class BrokerCommands {
    /** What the counter's map names each figure (test-broker's {@code CommandCounter}). */
    private static final String ACK = "ACK";

    private static final String ACKED_IDS = "ACK ids";
    private static final String FLOW = "FLOW";
    private static final String PERMITS = "FLOW permits";
    private static final String REDELIVER = "REDELIVER_UNACKNOWLEDGED_MESSAGES";
    private static final String REDELIVERED_IDS = "REDELIVER ids";
    private static final String SEND = "SEND";
    private static final String SENT_MESSAGES = "SEND messages";
    private static final String DISPATCHED_ENTRIES = "dispatched entries";

    /**
     * Counts of one moment, or their difference over a run.
     *
     * @param acks ACK commands
     * @param ackedIds the message ids they named (a grouped acknowledgement names several)
     * @param flows FLOW commands
     * @param permits the messages they let the broker send
     * @param redeliveries REDELIVER_UNACKNOWLEDGED_MESSAGES commands
     * @param redeliveredIds the ids they named (a command naming none asks for all the consumer's unacknowledged)
     * @param sends SEND commands (a batch is one)
     * @param sentMessages the messages they carried
     * @param dispatchedEntries entries the broker sent consumers (a batch is one entry)
     */
    record Counts(
            long acks,
            long ackedIds,
            long flows,
            long permits,
            long redeliveries,
            long redeliveredIds,
            long sends,
            long sentMessages,
            long dispatchedEntries) {
        /** Nothing counted: the broker is not in this JVM. */
        static final Counts NONE = new Counts(0, 0, 0, 0, 0, 0, 0, 0, 0);

        /** From the counter's map; a command type it has not seen yet counts 0. */
        static Counts of(Map<String, Long> read) {
            return new Counts(
                    read.getOrDefault(ACK, 0L),
                    read.getOrDefault(ACKED_IDS, 0L),
                    read.getOrDefault(FLOW, 0L),
                    read.getOrDefault(PERMITS, 0L),
                    read.getOrDefault(REDELIVER, 0L),
                    read.getOrDefault(REDELIVERED_IDS, 0L),
                    read.getOrDefault(SEND, 0L),
                    read.getOrDefault(SENT_MESSAGES, 0L),
                    read.getOrDefault(DISPATCHED_ENTRIES, 0L));
        }

        /** What was counted since {@code earlier}. */
        Counts minus(Counts earlier) {
            return new Counts(
                    acks - earlier.acks,
                    ackedIds - earlier.ackedIds,
                    flows - earlier.flows,
                    permits - earlier.permits,
                    redeliveries - earlier.redeliveries,
                    redeliveredIds - earlier.redeliveredIds,
                    sends - earlier.sends,
                    sentMessages - earlier.sentMessages,
                    dispatchedEntries - earlier.dispatchedEntries);
        }

        /**
         * One line for a child's run of {@code messages}: each command per 1,000 messages (a batched drain's ACKs are a
         * few hundredths of one), with what a command carried on average, e.g. {@code ACK 1.500 (666.7 ids each)}.
         */
        String perThousand(int messages) {
            return String.format(
                    Locale.ROOT,
                    "per 1,000 msgs: ACK %.3f (%s ids each)  FLOW %.3f (%s permits each)  REDELIVER %.3f (%d ids)"
                            + "  SEND %.3f (%s msgs each)  dispatched %.3f entries",
                    perThousand(acks, messages),
                    each(ackedIds, acks),
                    perThousand(flows, messages),
                    each(permits, flows),
                    perThousand(redeliveries, messages),
                    redeliveredIds,
                    perThousand(sends, messages),
                    each(sentMessages, sends),
                    perThousand(dispatchedEntries, messages));
        }

        /** {@code count} per 1,000 of {@code messages}. */
        static double perThousand(long count, int messages) {
            return messages == 0 ? Double.NaN : count * 1000.0 / messages;
        }

        private static String each(long carried, long commands) {
            return commands == 0 ? "-" : String.format(Locale.ROOT, "%.1f", (double) carried / commands);
        }
    }

    private final Supplier<Map<String, Long>> counter;

    private BrokerCommands(Supplier<Map<String, Long>> counter) {
        this.counter = counter;
    }

    /**
     * Starts counting the commands of the broker at {@code pulsar} when it runs in this JVM (the harness's own, or the
     * integration tests' shared one); empty for a broker given by URL, whose commands cannot be counted from here.
     */
    static Optional<BrokerCommands> install(PulsarEndpoints pulsar) {
        return EmbeddedPulsar.inThisJvm(pulsar).map(broker -> new BrokerCommands(broker.countCommands()));
    }

    /** A counter read from {@code counter}'s maps, as the broker's interceptor gives them. */
    static BrokerCommands reading(Supplier<Map<String, Long>> counter) {
        return new BrokerCommands(counter);
    }

    /** The counts so far: comparable only with another reading of this object. */
    Counts now() {
        return Counts.of(counter.get());
    }
}
