package dev.settle.runtime.canary;

import java.nio.charset.StandardCharsets;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.common.util.Murmur3_32Hash;

/**
 * Where a message's key falls in the key-hash range, as Pulsar's Key_Shared computes it, and whether that is inside
 * the first {@code percent} of the range. Pulsar 4.2.4's broker ({@code StickyKeyConsumerSelectorUtils
 * .makeStickyKeyHash}, used by {@code StickyKeyConsumerSelector} and so by
 * {@code HashRangeAutoSplitStickyKeyConsumerSelector}) hashes the sticky key with
 * {@code Murmur3_32Hash.getInstance().makeHash(keyBytes) % 65536} ({@code DEFAULT_RANGE_SIZE}), a hash of 0 made 1
 * ({@code STICKY_KEY_HASH_NOT_SET}); its sticky key is the ordering key when the message has one, else the key. The
 * same hash on every runtime and across restarts, with nothing to coordinate: the slice is stable.
 *
 * <p>A message without a key is placed by its message id (the same id on every redelivery, so its attempts stay on
 * one side).
 */
public final class KeySlice {
    /** Pulsar's {@code StickyKeyConsumerSelector.DEFAULT_RANGE_SIZE}. */
    static final int RANGE = 65536;

    private final int percent;
    /** Hashes below this go to the canary: the first {@code percent} of the range. */
    private final int bound;

    private KeySlice(int percent) {
        this.percent = percent;
        this.bound = (int) ((long) percent * RANGE / 100);
    }

    /**
     * The first {@code percent} of the range, 0 to 100.
     *
     * @throws IllegalArgumentException outside 0..100
     */
    public static KeySlice of(int percent) {
        if (percent < 0 || percent > 100) {
            throw new IllegalArgumentException("a slice of the key range is 0 to 100 percent, was " + percent);
        }
        return new KeySlice(percent);
    }

    public int percent() {
        return percent;
    }

    /** Whether {@code message}'s key (or, without one, its id) falls in this slice. */
    public boolean contains(Message<?> message) {
        return hash(message) < bound;
    }

    /** Whether a key hash ({@link #hash}) falls in this slice. */
    boolean containsHash(int hash) {
        return hash < bound;
    }

    /** The message's place in the range, 1 to 65535, as the broker's Key_Shared selector computes it. */
    static int hash(Message<?> message) {
        byte[] key;
        if (message.hasOrderingKey()) {
            key = message.getOrderingKey();
        } else if (message.hasKey()) {
            key = message.getKeyBytes();
        } else {
            key = message.getMessageId().toString().getBytes(StandardCharsets.UTF_8);
        }
        return hashOf(key);
    }

    /** {@code keyBytes}' place in the range, 1 to 65535 (StickyKeyConsumerSelectorUtils.makeStickyKeyHash). */
    static int hashOf(byte[] keyBytes) {
        int hash = Murmur3_32Hash.getInstance().makeHash(keyBytes) % RANGE;
        return hash == 0 ? 1 : hash;
    }

    @Override
    public String toString() {
        return percent + "% of keys";
    }
}
