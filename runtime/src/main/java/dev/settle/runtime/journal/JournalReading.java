package dev.settle.runtime.journal;

import static dev.settle.runtime.journal.JournalBatch.ID_BATCHED;
import static dev.settle.runtime.journal.JournalBatch.ID_NUMBERS;
import static dev.settle.runtime.journal.JournalBatch.ORIGIN_IS_THE_MESSAGE;
import static dev.settle.runtime.journal.JournalBatch.SHA_256_BYTES;
import static dev.settle.runtime.journal.JournalBatch.SHA_BYTES;
import static dev.settle.runtime.journal.JournalBatch.TAGGED_ABSENT;
import static dev.settle.runtime.journal.JournalBatch.TAGGED_TEXT;
import static dev.settle.runtime.journal.JournalBatch.hex;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A journal message's records read back, of each format a runtime has written, so a journal written by an earlier
 * runtime still tells its story: version 4, which {@link JournalBatch.Body} writes; versions 3 and 2 (a number as a
 * big-endian {@code long} or {@code int}, a text's length an {@code int}, -1 when absent, a repeated text {@code -2 -
 * i}; version 2 with the message id and the SHA-256 always as text); version 1, a record as the properties of an empty
 * message ({@link JournalRecord#from}). The writing stays in {@link JournalBatch}, which has one format.
 */
final class JournalReading {
    /** Version 3: the numbers as fixed-size big-endian ints and longs, still read. */
    private static final String FIXED_BATCH_FORMAT = "3";
    /** Records in the body of one message, the message id and the SHA-256 as text: still read. */
    private static final String TEXT_BATCH_FORMAT = "2";

    /** Versions 2 and 3: a text's length when there is none. */
    private static final int ABSENT = -1;
    /** Versions 2 and 3: a repeated text is {@code -2 - i}, the i-th text first written in the body's repeated fields. */
    private static final int FIRST_REFERENCE = -2;

    private JournalReading() {}

    /** {@link JournalBatch#read}: the records of a journal message, of any format; none when it does not read. */
    static List<JournalRecord> read(Map<String, String> properties, byte[] body) {
        String format = properties.get(JournalBatch.FORMAT);
        if ("1".equals(format)) {
            return JournalRecord.from(properties).map(List::of).orElse(List.of());
        }
        int version = JournalBatch.BATCH_FORMAT.equals(format)
                ? 4
                : FIXED_BATCH_FORMAT.equals(format) ? 3 : TEXT_BATCH_FORMAT.equals(format) ? 2 : 0;
        if (version == 0 || body == null) {
            return List.of();
        }
        try {
            Reading in = version == 4
                    ? new CompactReading(ByteBuffer.wrap(body))
                    : new Reading(ByteBuffer.wrap(body), version == 3);
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

    /** One body of version 2 or 3 being read. */
    private static class Reading {
        final ByteBuffer bytes;
        private final boolean tagged;
        final List<String> shared = new ArrayList<>();

        Reading(ByteBuffer bytes, boolean tagged) {
            this.bytes = bytes;
            this.tagged = tagged;
        }

        JournalRecord record() {
            long at = at();
            String subscription = shared();
            String topic = shared();
            String messageId = tagged ? messageId() : text();
            String origin = bytes.get() == ORIGIN_IS_THE_MESSAGE ? topic + "@" + messageId : text();
            return new JournalRecord(
                    at,
                    subscription,
                    topic,
                    messageId,
                    origin,
                    text(),
                    number(),
                    shared(),
                    number(),
                    shared(),
                    shared(),
                    shared(),
                    shared(),
                    shared(),
                    micros(),
                    text(),
                    tagged ? sha256() : text(),
                    shared());
        }

        long at() {
            return bytes.getLong();
        }

        /** The attempt or the generation. */
        int number() {
            return bytes.getInt();
        }

        long micros() {
            return bytes.getLong();
        }

        /** As Pulsar's {@code MessageIdImpl} and {@code BatchMessageIdImpl} print themselves. */
        String messageId() {
            byte tag = bytes.get();
            return switch (tag) {
                case TAGGED_TEXT -> text();
                case ID_NUMBERS -> bytes.getLong() + ":" + bytes.getLong() + ":" + bytes.getInt();
                case ID_BATCHED ->
                    bytes.getLong() + ":" + bytes.getLong() + ":" + bytes.getInt() + ":" + bytes.getInt();
                default -> throw new IllegalArgumentException("a message id tagged " + tag);
            };
        }

        String sha256() {
            byte tag = bytes.get();
            return switch (tag) {
                case TAGGED_ABSENT -> null;
                case TAGGED_TEXT -> text();
                case SHA_BYTES -> {
                    String hex = hex(bytes.array(), bytes.position(), SHA_256_BYTES);
                    bytes.position(bytes.position() + SHA_256_BYTES);
                    yield hex;
                }
                default -> throw new IllegalArgumentException("a SHA-256 tagged " + tag);
            };
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

    /**
     * One body of version 4 being read: the numbers as varints (unsigned LEB128, a signed one zigzagged first), {@code at}
     * and a Pulsar id's ledger and entry as the difference from the record before in the body.
     */
    private static final class CompactReading extends Reading {
        private long lastAt;
        private long lastLedger;
        private long lastEntry;

        CompactReading(ByteBuffer bytes) {
            super(bytes, true);
        }

        @Override
        long at() {
            lastAt += signed();
            return lastAt;
        }

        @Override
        int number() {
            return Math.toIntExact(signed());
        }

        @Override
        long micros() {
            return signed();
        }

        @Override
        String messageId() {
            byte tag = bytes.get();
            if (tag == TAGGED_TEXT) {
                return text();
            }
            if (tag != ID_NUMBERS && tag != ID_BATCHED) {
                throw new IllegalArgumentException("a message id tagged " + tag);
            }
            lastLedger += signed();
            lastEntry += signed();
            String id = lastLedger + ":" + lastEntry + ":" + number();
            return tag == ID_BATCHED ? id + ":" + number() : id;
        }

        @Override
        String text() {
            long mark = unsigned();
            if (mark == 0) {
                return null;
            }
            return utf8(Math.toIntExact(mark - 1));
        }

        @Override
        String shared() {
            long mark = unsigned();
            if (mark == 0) {
                return null;
            }
            if (mark >= 2) {
                return shared.get(Math.toIntExact(mark - 2));
            }
            String text = utf8(Math.toIntExact(unsigned()));
            shared.add(text);
            return text;
        }

        private String utf8(int length) {
            if (length > bytes.remaining()) {
                throw new IllegalArgumentException("a text of " + length + " bytes, " + bytes.remaining() + " left");
            }
            String text = new String(bytes.array(), bytes.position(), length, StandardCharsets.UTF_8);
            bytes.position(bytes.position() + length);
            return text;
        }

        private long signed() {
            long zigzag = unsigned();
            return (zigzag >>> 1) ^ -(zigzag & 1);
        }

        private long unsigned() {
            long value = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                byte b = bytes.get();
                value |= (long) (b & 0x7f) << shift;
                if (b >= 0) {
                    return value;
                }
            }
            throw new IllegalArgumentException("a varint longer than 10 bytes");
        }
    }
}
