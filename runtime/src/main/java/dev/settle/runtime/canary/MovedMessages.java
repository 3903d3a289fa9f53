package dev.settle.runtime.canary;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;

/**
 * The messages a ramp moved to the current generation at exactly-once ({@link GenerationRouter}): their canary call
 * failed after sending in their transaction, so their next attempt is the current generation's. Each is taken once,
 * at that attempt. Bounded: past {@link #MAX} the oldest is forgotten, and such a message meets the canary once more
 * (it may be moved again; never dead-lettered for it). Thread-safe.
 */
public final class MovedMessages {
    /** Far above the messages a subscription holds unacknowledged (50 000 by default on Shared) in a slice. */
    static final int MAX = 100_000;

    private final Map<MessageId, Boolean> ids = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<MessageId, Boolean> eldest) {
            return size() > MAX;
        }
    };

    /** Whether any message was ever moved: at at-least-once none is, and no message takes the lock. */
    private volatile boolean any;

    synchronized void add(Message<?> message) {
        ids.put(message.getMessageId(), Boolean.TRUE);
        any = true;
    }

    /** Whether {@code message} was moved, forgetting it: its attempt now goes to the current generation. */
    boolean takes(Message<?> message) {
        if (!any) {
            return false;
        }
        synchronized (this) {
            return ids.remove(message.getMessageId()) != null;
        }
    }

    synchronized int size() {
        return ids.size();
    }
}
