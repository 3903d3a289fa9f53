package dev.settle.runtime.journal;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Many journal records as the body of one Pulsar message: what a flush sends (one message per flush, or a few when the
 * records pass {@link #MAX_BODY_BYTES}), instead of one message per settlement, whose sends cost the consumer twice its
 * no-op CPU per message (docs/benchmarks.md). The message says {@code settle.journal: 2}; version 1, a record as the
 * properties of an empty message ({@link JournalRecord#properties()}), is still read, so a journal written by an
 * earlier runtime tells its story.
 *
 * <p>The body: the record count (a 4-byte int), then each record's fields in {@link JournalRecord}'s order, a number
 * as a big-endian {@code long} or {@code int}, a text as its UTF-8 length (an {@code int}, -1 when absent) and bytes.
 */
public final class JournalBatch {
    /** The property that marks a journal message and names its format. */
    static final String FORMAT = JournalRecord.VERSION;
    /** Records in the body of one message. */
    static final String BATCH_FORMAT = "2";
    /** Pulsar refuses a message above the broker's {@code maxMessageSize} (5 MB by default): a body stays far below. */
    static final int MAX_BODY_BYTES = 1 << 20;

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
        Body body = new Body();
        for (JournalRecord record : records) {
            body.write(record);
            if (body.size() >= maxBytes) {
                batches.add(body.done());
                body = new Body();
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
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(body))) {
            int count = in.readInt();
            if (count < 0 || count > body.length) {
                return List.of();
            }
            List<JournalRecord> records = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                records.add(read(in));
            }
            return in.available() == 0 ? records : List.of();
        } catch (IOException | RuntimeException unreadable) {
            return List.of();
        }
    }

    private static JournalRecord read(DataInputStream in) throws IOException {
        return new JournalRecord(
                in.readLong(),
                text(in),
                text(in),
                text(in),
                text(in),
                text(in),
                in.readInt(),
                text(in),
                in.readInt(),
                text(in),
                text(in),
                text(in),
                text(in),
                text(in),
                in.readLong(),
                text(in),
                text(in),
                text(in));
    }

    private static String text(DataInputStream in) throws IOException {
        int length = in.readInt();
        if (length < 0) {
            return null;
        }
        if (length > in.available()) {
            throw new IOException("a text of " + length + " bytes in a body with " + in.available() + " left");
        }
        return new String(in.readNBytes(length), StandardCharsets.UTF_8);
    }

    /** One body being written. */
    private static final class Body {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream(4096);
        private final DataOutputStream out = new DataOutputStream(bytes);
        private int count;
        private long firstAt;

        Body() {
            try {
                out.writeInt(0); // the count, set in done()
            } catch (IOException impossible) {
                throw new UncheckedIOException(impossible);
            }
        }

        int size() {
            return bytes.size();
        }

        void write(JournalRecord r) {
            try {
                if (count == 0) {
                    firstAt = r.at();
                }
                out.writeLong(r.at());
                text(r.subscription());
                text(r.topic());
                text(r.messageId());
                text(r.origin());
                text(r.key());
                out.writeInt(r.attempt());
                text(r.code());
                out.writeInt(r.generation());
                text(r.instance());
                text(r.outcome());
                text(r.deadLetterTopic());
                text(r.failureStage());
                text(r.causeClass());
                out.writeLong(r.handlingMicros());
                text(r.traceId());
                text(r.payloadSha256());
                text(r.transaction());
                count++;
            } catch (IOException impossible) {
                // A ByteArrayOutputStream does not fail.
                throw new UncheckedIOException(impossible);
            }
        }

        private void text(String value) throws IOException {
            if (value == null) {
                out.writeInt(-1);
                return;
            }
            byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
            out.writeInt(utf8.length);
            out.write(utf8);
        }

        JournalBatch done() {
            byte[] body = bytes.toByteArray();
            body[0] = (byte) (count >>> 24);
            body[1] = (byte) (count >>> 16);
            body[2] = (byte) (count >>> 8);
            body[3] = (byte) count;
            return new JournalBatch(body, count, firstAt);
        }
    }
}
