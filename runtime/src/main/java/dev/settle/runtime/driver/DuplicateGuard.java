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
 * being handled now, or whose dead letter is being written (left alone: the twin's settlement settles the entry);
 * {@link Verdict#ACKED} a copy whose twin was acknowledged, or dead-lettered and acknowledged with its letter
 * (acknowledged again, which the broker takes as a no-op and which clears the copy from its unacknowledged list).
 * Without the dead-lettered case the handler ran a {@code maxAttempts + 1}-th time and wrote a second letter (issue
 * 41). A copy whose twin was retried, failed without a letter or left without outcome is handed over: the
 * redelivery count is reset by a broker restart, and holding such a copy back could strand the message, while a
 * repeat is what at-least-once allows. Remembers the last {@code capacity} acknowledgements. Thread-safe when calls
 * overlap. Without (concurrency 1), the caller orders each call's {@link #admit} after the last call is over, as the
 * driver's one permit does; a call settled after that (it waits for its outputs) is announced by
 * {@link #settlesLater} before its permit goes back. While no such settlement is outstanding, no lock is taken and
 * nothing is allocated per message (the lock and the in-hand set were a quarter of the no-op receive thread's time
 * in JFR).
 */
final class DuplicateGuard implements Repeats {
    /** What to do with one received copy. */
    enum Verdict {
        HANDLE,
        IN_FLIGHT,
        ACKED
    }

    /**
     * A copy as a set's key, for the copies in hand and the acknowledged ids of another kind. The redelivery count is
     * part of the key: a retry's next copy (count + 1) is a new delivery. An id of the client's own kind is keyed by
     * its numbers (ledger ids are unique in the cluster, so they name the entry across topics): hashing and comparing
     * the client's id objects cost the message path a quarter of its time (measured with JFR on the no-op
     * benchmark). Any other id is keyed by itself.
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
    /** Whether several calls of the subscription run at once: then every copy is in hand from admit to finished. */
    private final boolean callsOverlap;
    /**
     * The copies in hand: with overlapping calls, each from its admit; without, only those {@link #settlesLater}
     * announced (a twin can arrive while they wait for their outputs). Guarded by this.
     */
    private final Set<Copy> inFlight = new HashSet<>();
    /**
     * The copies whose dead letter Settle is writing (or writes once their last attempt's hold ends), from
     * {@link #lettering} to {@link #lettered}: their twins are held back. Guarded by this.
     */
    private final Set<Copy> beingLettered = new HashSet<>();
    /**
     * Without overlapping calls: how many announced copies and copies being dead-lettered are still in hand. Zero means
     * no other thread is in the guard, so the one call's admit and finish run without the lock; written last, under
     * the lock.
     */
    private volatile int settlingLater;

    private final AckedCopies acked;
    /** Acknowledged copies whose id is not the client's own kind (a test's): rare, kept in a map. */
    private final Map<Copy, Boolean> ackedOthers;

    DuplicateGuard(int capacity) {
        this(capacity, true);
    }

    /**
     * @param callsOverlap whether a copy can arrive while its twin is still being handled: false for a driver of
     *     concurrency 1, which takes no message before the last one is settled (and then calls this guard from one
     *     thread at a time, in order)
     */
    DuplicateGuard(int capacity, boolean callsOverlap) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
        }
        this.capacity = capacity;
        this.callsOverlap = callsOverlap;
        this.acked = new AckedCopies(capacity);
        this.ackedOthers = new LinkedHashMap<>(16, 0.75f, false) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Copy, Boolean> eldest) {
                return size() > DuplicateGuard.this.capacity;
            }
        };
    }

    /** Decides about a received copy; {@link Verdict#HANDLE} must be followed by {@link #finished}. */
    @Override
    public Verdict admit(Message<?> message) {
        return admit(message.getMessageId(), message.getRedeliveryCount());
    }

    Verdict admit(MessageId id, int redeliveryCount) {
        if (!callsOverlap && settlingLater == 0) {
            // The last call is over and settled, and no thread settles one later: nothing else is in the guard.
            return ackedBefore(id, redeliveryCount) ? Verdict.ACKED : Verdict.HANDLE;
        }
        synchronized (this) {
            if (ackedBefore(id, redeliveryCount)) {
                return Verdict.ACKED;
            }
            Copy copy = Copy.of(id, redeliveryCount);
            if (beingLettered.contains(copy)) {
                return Verdict.IN_FLIGHT;
            }
            if (!callsOverlap) {
                // This copy's call is the only one: it is in hand only if it is announced as settled later.
                return inFlight.contains(copy) ? Verdict.IN_FLIGHT : Verdict.HANDLE;
            }
            return inFlight.add(copy) ? Verdict.HANDLE : Verdict.IN_FLIGHT;
        }
    }

    /**
     * Whether a twin of this copy was acknowledged, without taking the copy in hand: asked at a stop of the copies
     * left in the consumer's queue ({@link ReceiveLoop#acknowledgeQueuedRepeats}).
     */
    @Override
    public synchronized boolean twinAcknowledged(Message<?> message) {
        return ackedBefore(message.getMessageId(), message.getRedeliveryCount());
    }

    private boolean ackedBefore(MessageId id, int redeliveryCount) {
        // An id of the client's kind is looked up by its numbers: a copy allocates nothing here.
        return id instanceof MessageIdAdv adv
                ? acked.contains(adv, redeliveryCount)
                : ackedOthers.containsKey(Copy.of(id, redeliveryCount));
    }

    /**
     * The handled copy's call is over but it will be settled later, maybe on another thread (it waits for its
     * outputs): until {@link #finished}, a twin is held back as {@link Verdict#IN_FLIGHT}. Called before the call
     * gives its permit back; with overlapping calls the copy is in hand since its admit already.
     */
    @Override
    public void settlesLater(Message<?> message) {
        settlesLater(message.getMessageId(), message.getRedeliveryCount());
    }

    void settlesLater(MessageId id, int redeliveryCount) {
        if (callsOverlap) {
            return;
        }
        synchronized (this) {
            inFlight.add(Copy.of(id, redeliveryCount));
            settlingLater = settlingLater + 1;
        }
    }

    /** The handled copy is settled; {@code acknowledged} when that settlement acknowledged it. */
    @Override
    public void finished(Message<?> message, boolean acknowledged, boolean settledLater) {
        finished(message.getMessageId(), message.getRedeliveryCount(), acknowledged, settledLater);
    }

    void finished(MessageId id, int redeliveryCount, boolean acknowledged) {
        finished(id, redeliveryCount, acknowledged, false);
    }

    /** @param settledLater whether {@link #settlesLater} announced this copy */
    void finished(MessageId id, int redeliveryCount, boolean acknowledged, boolean settledLater) {
        if (!callsOverlap && !settledLater && settlingLater == 0) {
            remember(id, redeliveryCount, acknowledged);
            return;
        }
        synchronized (this) {
            if (callsOverlap || settledLater) {
                inFlight.remove(Copy.of(id, redeliveryCount));
            }
            remember(id, redeliveryCount, acknowledged);
            if (settledLater && !callsOverlap) {
                // Last: once it reads zero, the one call's thread goes on without the lock.
                settlingLater = settlingLater - 1;
            }
        }
    }

    /**
     * Settle dead-letters {@code message}'s copy (its letter is being written, or is written once its last attempt's
     * hold ends): until {@link #lettered}, a twin is held back as {@link Verdict#IN_FLIGHT}. Told once or more.
     */
    @Override
    public void lettering(Message<?> message) {
        lettering(message.getMessageId(), message.getRedeliveryCount());
    }

    void lettering(MessageId id, int redeliveryCount) {
        synchronized (this) {
            if (beingLettered.add(Copy.of(id, redeliveryCount)) && !callsOverlap) {
                settlingLater = settlingLater + 1;
            }
        }
    }

    /**
     * The copy's dead letter is settled: {@code acknowledged} when the letter was stored and the copy acknowledged, so
     * a twin is acknowledged again from now on; else a twin is handed over, as after a retry.
     */
    @Override
    public void lettered(Message<?> message, boolean acknowledged) {
        lettered(message.getMessageId(), message.getRedeliveryCount(), acknowledged);
    }

    void lettered(MessageId id, int redeliveryCount, boolean acknowledged) {
        synchronized (this) {
            boolean wasLettering = beingLettered.remove(Copy.of(id, redeliveryCount));
            remember(id, redeliveryCount, acknowledged);
            if (wasLettering && !callsOverlap) {
                // Last: once it reads zero, the one call's thread goes on without the lock.
                settlingLater = settlingLater - 1;
            }
        }
    }

    private void remember(MessageId id, int redeliveryCount, boolean acknowledged) {
        if (!acknowledged) {
            return;
        }
        if (id instanceof MessageIdAdv adv) {
            acked.add(adv, redeliveryCount);
        } else {
            ackedOthers.put(Copy.of(id, redeliveryCount), Boolean.TRUE);
        }
    }

    /**
     * The last {@code capacity} acknowledged copies of ids of the client's kind, the oldest forgotten first, held in
     * arrays: remembering one allocates nothing. (A map's entries each lived about a second, long enough to be
     * copied by every young collection: a fifth of the no-op message path's allocation, in JFR.)
     *
     * <p>Laid out for the cache, since a lookup per message lands anywhere in it: a ring of the copies by age, four
     * longs side by side per copy, written and forgotten in order; and an open-addressing index with linear probing
     * whose entries are one long each, the copy's hash with the ring slot in its low bits. A lookup reads the index
     * alone unless the hash matches (then the ring's copy is compared in full, so a hash collision never counts as a
     * repeat); its home is the hash's top bits, so a forgotten copy leaves the index by shifting its run back, with
     * no tombstones and no read of the ring. (Five arrays of one field each cost a miss per field and per shifted
     * entry: the lookup was the receive thread's hottest method in JFR, unbatched.) Guarded as the guard says.
     */
    private static final class AckedCopies {
        private static final int LONGS_PER_COPY = 4;

        /** Per ring slot: ledger id, entry id, batch index and partition (32 bits each), redelivery count. */
        private final long[] ring;
        /** The hash with (ring slot + 1) in its low {@link #slotBits} bits; 0 when empty. A power of two long. */
        private final long[] index;

        private final int capacity;
        private final int slotBits;
        private final long slotMask;
        private final int homeShift;
        private final int mask;
        private int next;
        private int size;

        AckedCopies(int capacity) {
            this.capacity = capacity;
            ring = new long[capacity * LONGS_PER_COPY];
            // At most half full, so runs stay short.
            index = new long[Integer.highestOneBit(Math.max(2, capacity) * 2 - 1) << 1];
            mask = index.length - 1;
            slotBits = Integer.SIZE - Integer.numberOfLeadingZeros(capacity);
            slotMask = (1L << slotBits) - 1;
            homeShift = Long.SIZE - Integer.numberOfTrailingZeros(index.length);
        }

        boolean contains(MessageIdAdv id, int count) {
            long ledgerId = id.getLedgerId();
            long entryId = id.getEntryId();
            long position = position(id.getBatchIndex(), id.getPartitionIndex());
            return find(hash(ledgerId, entryId, position, count), ledgerId, entryId, position, count) >= 0;
        }

        void add(MessageIdAdv id, int count) {
            long ledgerId = id.getLedgerId();
            long entryId = id.getEntryId();
            long position = position(id.getBatchIndex(), id.getPartitionIndex());
            long hash = hash(ledgerId, entryId, position, count);
            if (find(hash, ledgerId, entryId, position, count) >= 0) {
                return;
            }
            if (size == capacity) {
                forget(next);
            } else {
                size++;
            }
            int at = next * LONGS_PER_COPY;
            ring[at] = ledgerId;
            ring[at + 1] = entryId;
            ring[at + 2] = position;
            ring[at + 3] = count;
            int i = home(hash);
            while (index[i] != 0) {
                i = (i + 1) & mask;
            }
            index[i] = (hash & ~slotMask) | (next + 1);
            next = next + 1 == capacity ? 0 : next + 1;
        }

        /** The index position of the copy, or -1. */
        private int find(long hash, long ledgerId, long entryId, long position, int count) {
            long key = hash & ~slotMask;
            int i = home(hash);
            long entry;
            while ((entry = index[i]) != 0) {
                if ((entry & ~slotMask) == key) {
                    int at = (int) ((entry & slotMask) - 1) * LONGS_PER_COPY;
                    if (ring[at] == ledgerId
                            && ring[at + 1] == entryId
                            && ring[at + 2] == position
                            && ring[at + 3] == count) {
                        return i;
                    }
                }
                i = (i + 1) & mask;
            }
            return -1;
        }

        /** Takes the copy in ring slot {@code slot} out of the index, shifting the rest of its run back. */
        private void forget(int slot) {
            int at = slot * LONGS_PER_COPY;
            int i = home(hash(ring[at], ring[at + 1], ring[at + 2], (int) ring[at + 3]));
            while ((index[i] & slotMask) != slot + 1) {
                i = (i + 1) & mask;
            }
            int j = i;
            while (true) {
                j = (j + 1) & mask;
                if (index[j] == 0) {
                    break;
                }
                int k = home(index[j]);
                // Move the copy at j back to i unless its home lies cyclically in (i, j].
                boolean stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
                if (!stays) {
                    index[i] = index[j];
                    i = j;
                }
            }
            index[i] = 0;
        }

        /** The index position a hash (or an index entry, which keeps the hash's top bits) starts probing at. */
        private int home(long hash) {
            return (int) (hash >>> homeShift);
        }

        private static long position(int batchIndex, int partition) {
            return ((long) batchIndex << 32) | (partition & 0xFFFFFFFFL);
        }

        /**
         * Combines the fields, then mixes with MurmurHash3's 64-bit finalizer: the top bits are the home, and without
         * the finalizer batch indexes and partitions (the position's high and low halves) clustered, four times the
         * probes of random homes in a simulation of a batched backlog.
         */
        private static long hash(long ledgerId, long entryId, long position, int count) {
            long h = ledgerId * 0x9E3779B97F4A7C15L + entryId;
            h = h * 0xC2B2AE3D27D4EB4FL + position;
            h = h * 0x165667B19E3779F9L + count;
            h = (h ^ (h >>> 33)) * 0xFF51AFD7ED558CCDL;
            h = (h ^ (h >>> 33)) * 0xC4CEB9FE1A85EC53L;
            return h ^ (h >>> 33);
        }
    }
}
