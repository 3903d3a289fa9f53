package dev.settle.runtime.journal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Many journal records as the body of one Pulsar message: what a flush sends (one message per flush, or a few when the
 * records pass {@link #MAX_BODY_BYTES}), instead of one message per settlement, whose sends cost the consumer twice its
 * no-op CPU per message (docs/benchmarks.md). The message says {@code settle.journal: 2}; version 1, a record as the
 * properties of an empty message ({@link JournalRecord#properties()}), is still read, so a journal written by an
 * earlier runtime tells its story.
 *
 * <p>The body (docs/trace.md): the record count (a 4-byte int), then each record's fields in {@link JournalRecord}'s
 * order, a number as a big-endian {@code long} or {@code int}, a text as its UTF-8 length (an {@code int}, -1 when
 * absent) and bytes. The texts a subscription repeats (subscription, topic, code, instance, outcome, dead-letter
 * topic, failure stage, cause class, transaction) are written once a body and then as {@code -2 - i}, the
 * i-th of them first written; the origin is one byte, 0 when it is {@code topic@messageId}, else 1 and the text. A
 * record is then about 150 bytes, the flush's encoding a fraction of a microsecond a record.
 */
public final class JournalBatch {
    /** The property that marks a journal message and names its format. */
    static final String FORMAT = JournalRecord.VERSION;
    /** Records in the body of one message. */
    static final String BATCH_FORMAT = "2";
    /**
     * A body is cut past 256 KB: under half of G1's smallest region (1 MB), so neither it nor the producer's copy is a
     * humongous allocation (1 MB bodies made the no-op benchmark's consumer collect 40 times more for them, 1.2 s of
     * pauses in 9 s); far below Pulsar's default {@code maxMessageSize} (5 MB).
     */
    static final int MAX_BODY_BYTES = 256 * 1024;

    /** A text's length when there is none. */
    private static final int ABSENT = -1;
    /** A repeated text is written as {@code -2 - i}: the i-th text first written in this body's repeated fields. */
    private static final int FIRST_REFERENCE = -2;

    private static final byte ORIGIN_IS_THE_MESSAGE = 0;
    private static final byte ORIGIN_FOLLOWS = 1;
    /** Big-endian, as {@link ByteBuffer} reads them. */
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private final byte[] body;
    private final int records;
    private final long firstAt;

    private JournalBatch(byte[] body, int records, long firstAt) {
        this.body = body;
        this.records = records;
        this.firstAt = firstAt;
    }

    /** The message's body. */
    byte[] body() {
        return body;
    }

    /** How many records it holds. */
    int records() {
        return records;
    }

    /** The first record's settlement time: the message's event time. */
    long firstAt() {
        return firstAt;
    }

    /** The message properties of every batch. */
    static Map<String, String> properties() {
        return Map.of(FORMAT, BATCH_FORMAT);
    }

    /** {@code records} as message bodies of at most about {@code maxBytes} each (a record is never split), in order. */
    static List<JournalBatch> of(List<JournalRecord> records, int maxBytes) {
        List<JournalBatch> batches = new ArrayList<>(1);
        // About 150 bytes a record: one buffer for the flush, up to a body's worth, each body copied out of it.
        byte[] scratch = new byte[(int) Math.min(maxBytes + 1024L, 192L * records.size() + 64)];
        Body body = new Body(scratch);
        for (JournalRecord record : records) {
            body.write(record);
            if (body.size() >= maxBytes) {
                batches.add(body.done());
                body = new Body(body.bytes);
            }
        }
        if (body.count > 0) {
            batches.add(body.done());
        }
        return batches;
    }

    /**
     * The records of a journal message, of either format; none when it is not one (another producer's message) or its
     * body does not read: a reader skips it rather than fail the whole story.
     */
    public static List<JournalRecord> read(Map<String, String> properties, byte[] body) {
        String format = properties.get(FORMAT);
        if ("1".equals(format)) {
            return JournalRecord.from(properties).map(List::of).orElse(List.of());
        }
        if (!BATCH_FORMAT.equals(format) || body == null) {
            return List.of();
        }
        try {
            Reading in = new Reading(ByteBuffer.wrap(body));
            int count = in.bytes.getInt();
            if (count < 0 || count > body.length) {
                return List.of();
            }
            List<JournalRecord> records = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                records.add(in.record());
            }
            return in.bytes.hasRemaining() ? List.of() : records;
        } catch (RuntimeException unreadable) {
            // A short body, a length past its end, a table index never written, a record a field of which is missing.
            return List.of();
        }
    }

    /** One body being read. */
    private static final class Reading {
        private final ByteBuffer bytes;
        private final List<String> shared = new ArrayList<>();

        Reading(ByteBuffer bytes) {
            this.bytes = bytes;
        }

        JournalRecord record() {
            long at = bytes.getLong();
            String subscription = shared();
            String topic = shared();
            String messageId = text();
            String origin = bytes.get() == ORIGIN_IS_THE_MESSAGE ? topic + "@" + messageId : text();
            return new JournalRecord(
                    at,
                    subscription,
                    topic,
                    messageId,
                    origin,
                    text(),
                    bytes.getInt(),
                    shared(),
                    bytes.getInt(),
                    shared(),
                    shared(),
                    shared(),
                    shared(),
                    shared(),
                    bytes.getLong(),
                    text(),
                    text(),
                    shared());
        }

        String text() {
            int length = bytes.getInt();
            if (length == ABSENT) {
                return null;
            }
            if (length < 0 || length > bytes.remaining()) {
                throw new IllegalArgumentException("a text of " + length + " bytes, " + bytes.remaining() + " left");
            }
            String text = new String(bytes.array(), bytes.position(), length, StandardCharsets.UTF_8);
            bytes.position(bytes.position() + length);
            return text;
        }

        String shared() {
            int mark = bytes.getInt(bytes.position());
            if (mark <= FIRST_REFERENCE) {
                bytes.getInt();
                return shared.get(FIRST_REFERENCE - mark);
            }
            String text = text();
            if (text != null) {
                shared.add(text);
            }
            return text;
        }
    }

    /** One body being written. */
    private static final class Body {
        private byte[] bytes;
        private int size = 4; // the count first, set in done()
        private final Map<String, Integer> shared = new HashMap<>();
        private int count;
        private long firstAt;

        Body(byte[] scratch) {
            bytes = scratch;
        }

        int size() {
            return size;
        }

        void write(JournalRecord r) {
            if (count == 0) {
                firstAt = r.at();
            }
            putLong(r.at());
            shared(r.subscription());
            shared(r.topic());
            text(r.messageId());
            if (r.origin().length() == r.topic().length() + 1 + r.messageId().length()
                    && r.origin().startsWith(r.topic())
                    && r.origin().charAt(r.topic().length()) == '@'
                    && r.origin().endsWith(r.messageId())) {
                putByte(ORIGIN_IS_THE_MESSAGE);
            } else {
                putByte(ORIGIN_FOLLOWS);
                text(r.origin());
            }
            text(r.key());
            putInt(r.attempt());
            shared(r.code());
            putInt(r.generation());
            shared(r.instance());
            shared(r.outcome());
            shared(r.deadLetterTopic());
            shared(r.failureStage());
            shared(r.causeClass());
            putLong(r.handlingMicros());
            text(r.traceId());
            text(r.payloadSha256());
            shared(r.transaction());
            count++;
        }

        /** A text of the few each subscription repeats (its name, topic, code, pod, outcome): written once a body. */
        private void shared(String value) {
            if (value == null) {
                putInt(ABSENT);
                return;
            }
            Integer index = shared.get(value);
            if (index != null) {
                putInt(FIRST_REFERENCE - index);
                return;
            }
            shared.put(value, shared.size());
            text(value);
        }

        private void text(String value) {
            if (value == null) {
                putInt(ABSENT);
                return;
            }
            byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
            putInt(utf8.length);
            room(utf8.length);
            System.arraycopy(utf8, 0, bytes, size, utf8.length);
            size += utf8.length;
        }

        private void putByte(byte value) {
            room(1);
            bytes[size++] = value;
        }

        private void putInt(int value) {
            room(4);
            INT.set(bytes, size, value);
            size += 4;
        }

        private void putLong(long value) {
            room(8);
            LONG.set(bytes, size, value);
            size += 8;
        }

        private void room(int more) {
            if (size + more > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(Math.max(64, bytes.length * 2), size + more));
            }
        }

        JournalBatch done() {
            INT.set(bytes, 0, count);
            return new JournalBatch(Arrays.copyOf(bytes, size), count, firstAt);
        }
    }
}
