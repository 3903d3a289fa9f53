package dev.settle.runtime.driver;

import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.apache.pulsar.client.impl.ConsumerImpl;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.apache.pulsar.client.impl.MultiTopicsConsumerImpl;
import org.apache.pulsar.client.impl.UnAckedMessageTracker;

/**
 * The client's ack-timeout tracker of one consumer, out of which the runtime takes each message it receives (issue
 * 44, leases): from then on the runtime decides when an unsettled message is given up. A message held behind its
 * key or queued for a free thread is never brought back by the client's clock, and a call runs under its lease
 * ({@code handlerTimeout}, {@code extend}), not under {@code ackTimeout}. A message the handler leaves without an
 * outcome is put back, so the ack timeout brings it back as the settlement contract says, counted from then.
 *
 * <p>The tracker is the client's own ({@code getUnAckedMessageTracker()}, public on both consumer classes). A
 * single-topic {@link ConsumerImpl} tracks a batch by its entry (Pulsar 4.2's {@code ConsumerImpl.trackMessage}
 * discards the batch index), a {@link MultiTopicsConsumerImpl} each message by its topic message id, while its
 * per-topic consumers track nothing. Another consumer class, or none ack timeout: nothing to do.
 */
final class ClientAckTimeout {
    /** A consumer without an ack timeout: receiving costs one call that does nothing. */
    static final ClientAckTimeout NONE = new ClientAckTimeout(null, false);

    /** The tracker; null for {@link #NONE}. */
    private final UnAckedMessageTracker tracker;
    /** Whether the tracker keys a batch's messages by their entry (a single-topic consumer). */
    private final boolean byEntry;

    private ClientAckTimeout(UnAckedMessageTracker tracker, boolean byEntry) {
        this.tracker = tracker;
        this.byEntry = byEntry;
    }

    /** The tracker of {@code consumer} when it has an ack timeout; {@link #NONE} otherwise. */
    static ClientAckTimeout of(Consumer<?> consumer, boolean hasAckTimeout) {
        if (!hasAckTimeout) {
            return NONE;
        }
        if (consumer instanceof ConsumerImpl<?> single) {
            return new ClientAckTimeout(single.getUnAckedMessageTracker(), true);
        }
        if (consumer instanceof MultiTopicsConsumerImpl<?> multi) {
            return new ClientAckTimeout(multi.getUnAckedMessageTracker(), false);
        }
        return NONE;
    }

    /** The runtime owns {@code message} from now on: the client's clock no longer runs for it. */
    void release(Message<?> message) {
        if (tracker != null) {
            tracker.remove(key(message.getMessageId()));
        }
    }

    /** {@code message} was left without an outcome: the client's ack timeout brings it back, counted from now. */
    void track(Message<?> message) {
        if (tracker != null) {
            tracker.add(key(message.getMessageId()));
        }
    }

    private MessageId key(MessageId id) {
        if (byEntry && id instanceof MessageIdAdv adv && adv.getBatchIndex() >= 0) {
            return new MessageIdImpl(adv.getLedgerId(), adv.getEntryId(), adv.getPartitionIndex());
        }
        return id;
    }
}
