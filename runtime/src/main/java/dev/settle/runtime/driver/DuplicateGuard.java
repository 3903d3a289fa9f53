package dev.settle.runtime.driver;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.MessageIdAdv;

/**
 * Keeps one subscription's handler from seeing the same copy of a message twice: the same message id with the
 * same redelivery count, while the first copy is still being handled or shortly after it was acknowledged.
 *
 * <p>Why: a 4.2.4 broker sometimes dispatches one entry twice with the same redelivery count, milliseconds apart,
 * when a Shared subscription has several consumers and retries come back at once (the replay read races a normal
 * read's hand-off; docs/pulsar-client-notes.md). A retry would then reach the handler as "attempt 2" twice.
 *
 * <p>What it decides, per copy: {@link Verdict#HANDLE} a new one; {@link Verdict#IN_FLIGHT} a copy whose twin is
 * being handled now (left alone: the twin's settlement settles the entry); {@link Verdict#ACKED} a copy whose twin
 * was acknowledged (acknowledged again, which the broker takes as a no-op and which clears the copy from its
 * unacknowledged list). A copy whose twin was retried, failed or left without outcome is handed over: the
 * redelivery count is reset by a broker restart, and holding such a copy back could strand the message, while a
 * repeat is what at-least-once allows. Remembers the last {@code capacity} acknowledgements; thread-safe.
 */
final class DuplicateGuard {
    /** What to do with one received copy. */
    enum Verdict {
        HANDLE,
        IN_FLIGHT,
        ACKED
    }

    /**
     * The redelivery count is part of the key: a retry's next copy (count + 1) is a new delivery. An id of the
     * client's own kind is keyed by its numbers (ledger ids are unique in the cluster, so they name the entry across
     * topics): hashing and comparing the client's id objects cost the message path a quarter of its time (measured
     * with JFR on the no-op benchmark). Any other id is keyed by itself.
     */
    private record Copy(long ledgerId, long entryId, int batchIndex, int partition, int redeliveryCount, Object id) {
        static Copy of(MessageId id, int redeliveryCount) {
            if (id instanceof MessageIdAdv adv) {
                return new Copy(
                        adv.getLedgerId(),
                        adv.getEntryId(),
                        adv.getBatchIndex(),
                        adv.getPartitionIndex(),
                        redeliveryCount,
                        null);
            }
            return new Copy(0, 0, 0, 0, redeliveryCount, id);
        }
    }

    private final int capacity;
    private final Set<Copy> inFlight = new HashSet<>();
    private final Map<Copy, Boolean> acked;

    DuplicateGuard(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
        }
        this.capacity = capacity;
        this.acked = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Copy, Boolean> eldest) {
                return size() > DuplicateGuard.this.capacity;
            }
        };
    }

    /** Decides about a received copy; {@link Verdict#HANDLE} must be followed by {@link #finished}. */
    Verdict admit(Message<?> message) {
        return admit(message.getMessageId(), message.getRedeliveryCount());
    }

    synchronized Verdict admit(MessageId id, int redeliveryCount) {
        Copy copy = Copy.of(id, redeliveryCount);
        if (acked.containsKey(copy)) {
            return Verdict.ACKED;
        }
        return inFlight.add(copy) ? Verdict.HANDLE : Verdict.IN_FLIGHT;
    }

    /** The handled copy is settled; {@code acknowledged} when that settlement acknowledged it. */
    void finished(Message<?> message, boolean acknowledged) {
        finished(message.getMessageId(), message.getRedeliveryCount(), acknowledged);
    }

    synchronized void finished(MessageId id, int redeliveryCount, boolean acknowledged) {
        Copy copy = Copy.of(id, redeliveryCount);
        inFlight.remove(copy);
        if (acknowledged) {
            acked.put(copy, Boolean.TRUE);
        }
    }
}
