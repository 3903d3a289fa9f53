package dev.settle.testbroker;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.junit.jupiter.api.Test;

/** Where {@link PulsarFixture#copies} stops reading: at the end of the entry the broker named last, or never. */
class CopiesEndTest {
    /** A message id of the broker's kind: an entry of a ledger, one message of a batch or none. */
    private record Id(long ledger, long entry, int batchIndex, int batchSize) implements MessageIdAdv {
        static Id of(long ledger, long entry) {
            return new Id(ledger, entry, -1, 0);
        }

        @Override
        public long getLedgerId() {
            return ledger;
        }

        @Override
        public long getEntryId() {
            return entry;
        }

        @Override
        public int getPartitionIndex() {
            return -1;
        }

        @Override
        public int getBatchIndex() {
            return batchIndex;
        }

        @Override
        public int getBatchSize() {
            return batchSize;
        }

        @Override
        public byte[] toByteArray() {
            return new byte[0];
        }

        @Override
        public int compareTo(MessageId other) {
            throw new UnsupportedOperationException("not used by copies");
        }
    }

    @Test
    void theLastEntryOrALaterOneEndsTheReadAnEarlierOneDoesNot() {
        Id last = Id.of(7, 40);

        assertThat(PulsarFixture.endsAt(Id.of(7, 40), last)).isTrue();
        assertThat(PulsarFixture.endsAt(Id.of(8, 0), last)).isTrue();
        assertThat(PulsarFixture.endsAt(Id.of(7, 39), last)).isFalse();
        assertThat(PulsarFixture.endsAt(Id.of(6, 99), last)).isFalse();
    }

    @Test
    void aBatchOfTheLastEntryEndsTheReadAtItsLastMessageOnly() {
        Id last = new Id(7, 40, 0, 0);

        assertThat(PulsarFixture.endsAt(new Id(7, 40, 0, 3), last)).isFalse();
        assertThat(PulsarFixture.endsAt(new Id(7, 40, 1, 3), last)).isFalse();
        assertThat(PulsarFixture.endsAt(new Id(7, 40, 2, 3), last)).isTrue();
    }

    @Test
    void anUnknownEndNeverEndsTheRead() {
        assertThat(PulsarFixture.endsAt(Id.of(9, 9), null)).isFalse();
    }
}
