package dev.settle.runtime.function;

import dev.settle.runtime.publish.Outputs;
import dev.settle.runtime.publish.Publishes;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TableView;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * A function's state as Kafka Streams keeps a store: key to bytes in memory, read back from a compacted topic when
 * the subscription starts, and every change published to that topic with the call's outputs, so that the input is
 * acknowledged only once the change is stored. A counter is a value of 8 bytes, big-endian. Thread-safe: a change
 * and its send happen under one lock, so the topic holds each key's changes in the order they were made.
 *
 * <p>At-least-once: an input that comes back (a failure, a crash before its acknowledgement) runs again and changes
 * the state again, so a counter counts it twice.
 */
final class FunctionState {
    private final String topic;
    private final Map<String, byte[]> values;

    FunctionState(String topic) {
        this.topic = topic;
        this.values = new ConcurrentHashMap<>();
    }

    /** Takes what was read back from the topic, before the first call. */
    void restore(Map<String, byte[]> read) {
        values.putAll(read);
    }

    /** Reads the state topic to its end (its compacted part, then what came after) with a TableView. */
    static Map<String, byte[]> read(PulsarClient client, String topic) throws PulsarClientException {
        try (TableView<byte[]> table =
                client.newTableView(Schema.BYTES).topic(topic).create()) {
            Map<String, byte[]> read = new java.util.HashMap<>();
            table.forEach((key, value) -> {
                if (value != null) {
                    read.put(key, value);
                }
            });
            return read;
        } catch (PulsarClientException e) {
            throw e;
        } catch (Exception e) {
            throw new PulsarClientException(e);
        }
    }

    String topic() {
        return topic;
    }

    ByteBuffer get(String key) {
        byte[] value = values.get(key);
        return value == null ? null : ByteBuffer.wrap(value.clone()).asReadOnlyBuffer();
    }

    long counter(String key) {
        byte[] value = values.get(key);
        return value == null || value.length != Long.BYTES
                ? 0
                : ByteBuffer.wrap(value).getLong();
    }

    /** Sets {@code key}; {@code null} deletes it (a tombstone, which compaction removes). */
    CompletableFuture<Void> put(String key, ByteBuffer value, Publishes publishes, Outputs outputs) {
        byte[] bytes = null;
        if (value != null) {
            ByteBuffer copy = value.duplicate();
            bytes = new byte[copy.remaining()];
            copy.get(bytes);
        }
        synchronized (this) {
            if (bytes == null) {
                values.remove(key);
            } else {
                values.put(key, bytes);
            }
            return send(key, bytes, publishes, outputs);
        }
    }

    CompletableFuture<Void> increment(String key, long amount, Publishes publishes, Outputs outputs) {
        synchronized (this) {
            byte[] bytes = ByteBuffer.allocate(Long.BYTES)
                    .putLong(counter(key) + amount)
                    .array();
            values.put(key, bytes);
            return send(key, bytes, publishes, outputs);
        }
    }

    /** Within the call: the input waits for it as for any output; at {@code initialize}: sent on its own. */
    private CompletableFuture<Void> send(String key, byte[] bytes, Publishes publishes, Outputs outputs) {
        TypedMessageBuilder<byte[]> message;
        try {
            message = publishes != null
                    ? publishes.newMessage(topic, Schema.BYTES)
                    : outputs.newMessage(topic, Schema.BYTES);
        } catch (PulsarClientException | RuntimeException e) {
            CompletableFuture<MessageId> failed = CompletableFuture.failedFuture(e);
            if (publishes != null) {
                // This delivery must not be acknowledged, even if the function catches the exception.
                publishes.add(failed);
            }
            return failed.thenApply(id -> null);
        }
        return message.key(key).value(bytes).sendAsync().thenApply(id -> null);
    }
}
