package dev.settle.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BrokerCommandsTest {
    /** The counter's map as test-broker's CommandCounter gives it: command types by name, then what they carried. */
    private static Map<String, Long> read(long acks, long ackedIds, long flows, long permits, long dispatched) {
        Map<String, Long> counts = new HashMap<>();
        counts.put("ACK", acks);
        counts.put("FLOW", flows);
        counts.put("ACK ids", ackedIds);
        counts.put("FLOW permits", permits);
        counts.put("REDELIVER ids", 0L);
        counts.put("SEND messages", 0L);
        counts.put("dispatched entries", dispatched);
        return counts;
    }

    @Test
    void readsEachFigureByTheCountersNamesAndATypeNotSeenAsZero() {
        BrokerCommands.Counts counts = BrokerCommands.Counts.of(read(2, 20, 3, 1500, 40));

        assertThat(counts).isEqualTo(new BrokerCommands.Counts(2, 20, 3, 1500, 0, 0, 0, 0, 40));
    }

    @Test
    void aRunCountsWhatCameBetweenItsTwoReadings() {
        Map<String, Long> counter = new HashMap<>(read(5, 50, 1, 500, 10));
        BrokerCommands commands = BrokerCommands.reading(() -> Map.copyOf(counter));
        BrokerCommands.Counts first = commands.now();
        counter.putAll(read(15, 1050, 3, 1500, 1010));
        counter.put("REDELIVER_UNACKNOWLEDGED_MESSAGES", 1L);
        counter.put("REDELIVER ids", 7L);

        BrokerCommands.Counts run = commands.now().minus(first);

        assertThat(run).isEqualTo(new BrokerCommands.Counts(10, 1000, 2, 1000, 1, 7, 0, 0, 1000));
    }

    @Test
    void perThousandGivesEachCommandPerThousandMessagesAndWhatOneCarried() {
        BrokerCommands.Counts run = new BrokerCommands.Counts(10, 1000, 2, 1000, 0, 0, 0, 0, 1000);

        assertThat(run.perThousand(2000))
                .isEqualTo("per 1,000 msgs: ACK 5.000 (100.0 ids each)  FLOW 1.000 (500.0 permits each)"
                        + "  REDELIVER 0.000 (0 ids)  SEND 0.000 (- msgs each)  dispatched 500.000 entries");
    }
}
