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
    /** Null when no two calls of the subscription overlap (concurrency 1): no twin can then be in hand. */
    private final Set<Copy> inFlight;

    private final AckedCopies acked;
    /** Acknowledged copies whose id is not the client's own kind (a test's): rare, kept in a map. */
    private final Map<Copy, Boolean> ackedOthers;

    DuplicateGuard(int capacity) {
        this(capacity, true);
    }

    /**
     * @param callsOverlap whether a copy can arrive while its twin is still being handled: false for a driver of
     *     concurrency 1, which takes no message before the last one is settled
     */
    DuplicateGuard(int capacity, boolean callsOverlap) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
        }
        this.capacity = capacity;
        this.inFlight = callsOverlap ? new HashSet<>() : null;
        this.acked = new AckedCopies(capacity);
        this.ackedOthers = new LinkedHashMap<>(16, 0.75f, false) {
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
        if (copy.id() == null ? acked.contains(copy) : ackedOthers.containsKey(copy)) {
            return Verdict.ACKED;
        }
        if (inFlight == null) {
            return Verdict.HANDLE;
        }
        return inFlight.add(copy) ? Verdict.HANDLE : Verdict.IN_FLIGHT;
    }

    /** The handled copy is settled; {@code acknowledged} when that settlement acknowledged it. */
    void finished(Message<?> message, boolean acknowledged) {
        finished(message.getMessageId(), message.getRedeliveryCount(), acknowledged);
    }

    synchronized void finished(MessageId id, int redeliveryCount, boolean acknowledged) {
        Copy copy = Copy.of(id, redeliveryCount);
        if (inFlight != null) {
            inFlight.remove(copy);
        }
        if (acknowledged) {
            if (copy.id() == null) {
                acked.add(copy);
            } else {
                ackedOthers.put(copy, Boolean.TRUE);
            }
        }
    }

    /**
     * The last {@code capacity} acknowledged copies of ids of the client's kind, the oldest forgotten first, held in
     * arrays: remembering one allocates nothing. (A map's entries each lived about a second, long enough to be
     * copied by every young collection: a fifth of the no-op message path's allocation, in JFR.) A ring of the copies
     * by age, and an open-addressing index into it with linear probing; a forgotten copy leaves the index by shifting
     * its run back, so no tombstones build up. Guarded by the guard's monitor.
     */
    private static final class AckedCopies {
        private final long[] ledgerIds;
        private final long[] entryIds;
        private final int[] batchIndexes;
        private final int[] partitions;
        private final int[] counts;
        /** Ring slot + 1 of the copy stored there, 0 when empty; at least twice the capacity, a power of two. */
        private final int[] index;

        private final int mask;
        private int next;
        private int size;

        AckedCopies(int capacity) {
            ledgerIds = new long[capacity];
            entryIds = new long[capacity];
            batchIndexes = new int[capacity];
            partitions = new int[capacity];
            counts = new int[capacity];
            index = new int[Integer.highestOneBit(Math.max(2, capacity) * 2 - 1) << 1];
            mask = index.length - 1;
        }

        boolean contains(Copy copy) {
            return find(copy) >= 0;
        }

        void add(Copy copy) {
            if (find(copy) >= 0) {
                return;
            }
            if (size == ledgerIds.length) {
                forget(next);
            } else {
                size++;
            }
            ledgerIds[next] = copy.ledgerId();
            entryIds[next] = copy.entryId();
            batchIndexes[next] = copy.batchIndex();
            partitions[next] = copy.partition();
            counts[next] = copy.redeliveryCount();
            int i = home(copy.ledgerId(), copy.entryId(), copy.batchIndex(), copy.partition(), copy.redeliveryCount());
            while (index[i] != 0) {
                i = (i + 1) & mask;
            }
            index[i] = next + 1;
            next = (next + 1) % ledgerIds.length;
        }

        /** The index position of {@code copy}, or -1. */
        private int find(Copy copy) {
            int i = home(copy.ledgerId(), copy.entryId(), copy.batchIndex(), copy.partition(), copy.redeliveryCount());
            while (index[i] != 0) {
                int slot = index[i] - 1;
                if (ledgerIds[slot] == copy.ledgerId()
                        && entryIds[slot] == copy.entryId()
                        && batchIndexes[slot] == copy.batchIndex()
                        && partitions[slot] == copy.partition()
                        && counts[slot] == copy.redeliveryCount()) {
                    return i;
                }
                i = (i + 1) & mask;
            }
            return -1;
        }

        /** Takes the copy in ring slot {@code slot} out of the index, shifting the rest of its run back. */
        private void forget(int slot) {
            int i = homeOf(slot);
            while (index[i] != slot + 1) {
                i = (i + 1) & mask;
            }
            int j = i;
            while (true) {
                j = (j + 1) & mask;
                if (index[j] == 0) {
                    break;
                }
                int k = homeOf(index[j] - 1);
                // Move the copy at j back to i unless its home lies cyclically in (i, j].
                boolean stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
                if (!stays) {
                    index[i] = index[j];
                    i = j;
                }
            }
            index[i] = 0;
        }

        private int homeOf(int slot) {
            return home(ledgerIds[slot], entryIds[slot], batchIndexes[slot], partitions[slot], counts[slot]);
        }

        private int home(long ledgerId, long entryId, int batchIndex, int partition, int count) {
            long h = ledgerId * 0x9E3779B97F4A7C15L;
            h = (h ^ entryId) * 0xC2B2AE3D27D4EB4FL;
            h = (h ^ (((long) batchIndex << 32) | (partition & 0xFFFFFFFFL))) * 0x165667B19E3779F9L;
            h = (h ^ count) * 0x9E3779B97F4A7C15L;
            return (int) (h ^ (h >>> 32)) & mask;
        }
    }
}
