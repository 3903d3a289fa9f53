package dev.settle.runtime.journal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.impl.BatchMessageIdImpl;
import org.apache.pulsar.client.impl.MessageIdImpl;

/**
 * Many journal records as the body of one Pulsar message: what a flush sends (one message per flush, or a few when the
 * records pass {@link #MAX_BODY_BYTES}), instead of one message per settlement, whose sends cost the consumer twice its
 * no-op CPU per message (docs/benchmarks.md). The message says {@code settle.journal: 4}; {@link #read} reads it and
 * the earlier formats 3, 2 and 1, so a journal written by an earlier runtime tells its story ({@link JournalReading}).
 *
 * <p>The body (docs/trace.md): the record count (a 4-byte int), then each record's fields in {@link JournalRecord}'s
 * order. Version 4 writes a number as a varint (unsigned LEB128; a signed one zigzagged first), {@code at} as the
 * difference from the record before in the body; a text as its UTF-8 length + 1 (0 when absent) and bytes. The texts a
 * subscription repeats (subscription, topic, code, instance, outcome, dead-letter topic, failure stage, cause class,
 * transaction) are written once a body, after a 1, and then as {@code i + 2}, the i-th of them first written (0 when
 * absent); the origin is one byte, 0 when it is {@code topic@messageId}, else 1 and the text. The message id is a tag
 * byte then its numbers ({@link #ID_NUMBERS}, {@link #ID_BATCHED}: the ledger and entry as the difference from the
 * id before, the partition and batch index) or its text ({@link #TAGGED_TEXT}); the SHA-256 a tag byte then its 32
 * bytes ({@link #SHA_BYTES}), its text, or nothing ({@link #TAGGED_ABSENT}). A record is about 55 bytes, 90 with a
 * trace id: every byte of it is copied, checksummed and sent by the runtime and stored by the broker (version 3's
 * fixed-size numbers took about 130).
 *
 * <p>A settling thread encodes its record straight into the open body ({@link Body#write(Draft)}): nothing of it is
 * kept as objects until the flush, which only sends the bodies.
 */
public final class JournalBatch {
    /** The property that marks a journal message and names its format. */
    static final String FORMAT = JournalRecord.VERSION;
    /** Records in the body of one message: the format this runtime writes. */
    static final String BATCH_FORMAT = "4";
    /**
     * A body is cut past 256 KB: under half of G1's smallest region (1 MB), so neither it nor the producer's copy is a
     * humongous allocation (1 MB bodies made the no-op benchmark's consumer collect 40 times more for them, 1.2 s of
     * pauses in 9 s); far below Pulsar's default {@code maxMessageSize} (5 MB).
     */
    static final int MAX_BODY_BYTES = 256 * 1024;

    /** The origin is the message's own {@code topic@messageId}; else {@link #ORIGIN_FOLLOWS} and its text. */
    static final byte ORIGIN_IS_THE_MESSAGE = 0;

    static final byte ORIGIN_FOLLOWS = 1;
    /** The tags of the message id and the SHA-256 (versions 3 and 4). */
    static final byte TAGGED_ABSENT = 0;
    /** A text follows (a length and UTF-8), as in version 2. */
    static final byte TAGGED_TEXT = 1;
    /** {@code ledgerId:entryId:partitionIndex}: a long, a long and an int follow. */
    static final byte ID_NUMBERS = 2;
    /** {@code ledgerId:entryId:partitionIndex:batchIndex}: a long, a long and two ints follow. */
    static final byte ID_BATCHED = 3;
    /** The SHA-256's 32 bytes follow. */
    static final byte SHA_BYTES = 4;

    static final int SHA_256_BYTES = 32;
    /** The texts of a body looked up by identity first: a subscription's few texts are the same objects each time. */
    private static final int SCANNED_TEXTS = 16;

    private static final byte[] HEX_DIGITS = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    /** Big-endian, as {@link java.nio.ByteBuffer} reads them. */
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

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
        Body body = new Body(Math.min(maxBytes + 1024, 128 * records.size() + 64));
        for (JournalRecord record : records) {
            body.write(record);
            if (body.size() >= maxBytes) {
                batches.add(body.done());
            }
        }
        if (body.count() > 0) {
            batches.add(body.done());
        }
        return batches;
    }

    /**
     * The records of a journal message, of any format; none when it is not one (another producer's message) or its
     * body does not read: a reader skips it rather than fail the whole story. Read by {@link JournalReading}.
     */
    public static List<JournalRecord> read(Map<String, String> properties, byte[] body) {
        return JournalReading.read(properties, body);
    }

    /** The format of a journal message's records ({@code settle.journal}); null when it is not one. */
    public static String formatOf(Map<String, String> properties) {
        return properties.get(FORMAT);
    }

    /** The lower-case hex of {@code bytes}. */
    static String hex(byte[] bytes, int offset, int length) {
        // By hand: HexFormat.formatHex was a third of the record's making in the no-op benchmark's profile.
        byte[] hex = new byte[length * 2];
        for (int i = 0; i < length; i++) {
            hex[2 * i] = HEX_DIGITS[(bytes[offset + i] >> 4) & 0xf];
            hex[2 * i + 1] = HEX_DIGITS[bytes[offset + i] & 0xf];
        }
        return new String(hex, StandardCharsets.ISO_8859_1);
    }

    /**
     * One body being written, in version 4. Its buffer is reused once {@link #done()} copied it out; not thread-safe
     * (the {@link JournalWriter} writes under its lock).
     */
    static final class Body {
        private byte[] bytes;
        private int size = 4; // the count first, set in done()
        private int count;
        private long firstAt;
        /** What the next record's {@code at} and Pulsar id are written as the difference from. */
        private long lastAt;

        private long lastLedger;
        private long lastEntry;
        /** The repeated texts written so far, by index: looked up by identity for the first few, else by the map. */
        private final List<String> texts = new ArrayList<>();

        private final Map<String, Integer> indexes = new HashMap<>();

        Body(int capacity) {
            bytes = new byte[Math.max(64, capacity)];
        }

        int size() {
            return size;
        }

        int count() {
            return count;
        }

        /** A record made on the message path: the message id as numbers, the SHA-256 as its bytes. */
        void write(Draft d) {
            int startSize = size;
            int startTexts = texts.size();
            long startAt = lastAt;
            long startLedger = lastLedger;
            long startEntry = lastEntry;
            try {
                at(d.at);
                shared(d.subscription);
                shared(d.topic);
                messageId(d.messageId, d.messageIdText);
                if (d.origin == null) {
                    putByte(ORIGIN_IS_THE_MESSAGE);
                } else {
                    putByte(ORIGIN_FOLLOWS);
                    text(d.origin);
                }
                text(d.key);
                putSigned(d.attempt);
                shared(d.code);
                putSigned(d.generation);
                shared(d.instance);
                shared(d.outcome);
                shared(d.deadLetterTopic);
                shared(d.failureStage);
                shared(d.causeClass);
                putSigned(d.handlingMicros);
                text(d.traceId);
                if (d.hasSha256) {
                    putByte(SHA_BYTES);
                    room(SHA_256_BYTES);
                    System.arraycopy(d.sha256, 0, bytes, size, SHA_256_BYTES);
                    size += SHA_256_BYTES;
                } else {
                    putByte(TAGGED_ABSENT);
                }
                shared(d.transaction);
            } catch (RuntimeException e) {
                // Nothing of a record that could not be written stays: the body still reads.
                size = startSize;
                lastAt = startAt;
                lastLedger = startLedger;
                lastEntry = startEntry;
                while (texts.size() > startTexts) {
                    indexes.remove(texts.remove(texts.size() - 1));
                }
                throw e;
            }
            counted(d.at);
        }

        /** A record as the reader gives it back: its message id and SHA-256 as text. */
        void write(JournalRecord r) {
            at(r.at());
            shared(r.subscription());
            shared(r.topic());
            putByte(TAGGED_TEXT);
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
            putSigned(r.attempt());
            shared(r.code());
            putSigned(r.generation());
            shared(r.instance());
            shared(r.outcome());
            shared(r.deadLetterTopic());
            shared(r.failureStage());
            shared(r.causeClass());
            putSigned(r.handlingMicros());
            text(r.traceId());
            if (r.payloadSha256() == null) {
                putByte(TAGGED_ABSENT);
            } else {
                putByte(TAGGED_TEXT);
                text(r.payloadSha256());
            }
            shared(r.transaction());
            counted(r.at());
        }

        private void counted(long at) {
            if (count == 0) {
                firstAt = at;
            }
            count++;
        }

        /** A body's records are settled milliseconds apart: the difference is a byte or two, the time itself six. */
        private void at(long at) {
            putSigned(at - lastAt);
            lastAt = at;
        }

        /**
         * Pulsar's two ids that print as their numbers, written as them (their text was a tenth of a record's making),
         * the ledger and entry as the difference from the id before (a few bytes, not 16); any other kind (a chunk's, a
         * multi-topic consumer's) as the text it prints, {@code text}.
         */
        private void messageId(MessageId id, String text) {
            if (id != null && id.getClass() == BatchMessageIdImpl.class) {
                BatchMessageIdImpl batched = (BatchMessageIdImpl) id;
                putByte(ID_BATCHED);
                ledgerAndEntry(batched.getLedgerId(), batched.getEntryId());
                putSigned(batched.getPartitionIndex());
                putSigned(batched.getBatchIndex());
            } else if (id != null && id.getClass() == MessageIdImpl.class) {
                MessageIdImpl plain = (MessageIdImpl) id;
                putByte(ID_NUMBERS);
                ledgerAndEntry(plain.getLedgerId(), plain.getEntryId());
                putSigned(plain.getPartitionIndex());
            } else {
                putByte(TAGGED_TEXT);
                text(text);
            }
        }

        private void ledgerAndEntry(long ledger, long entry) {
            putSigned(ledger - lastLedger);
            putSigned(entry - lastEntry);
            lastLedger = ledger;
            lastEntry = entry;
        }

        /**
         * A text of the few each subscription repeats (its name, topic, code, pod, outcome): written once a body, then
         * as its index + 2 (a byte); 0 when absent, 1 before a text written the first time.
         */
        private void shared(String value) {
            if (value == null) {
                putUnsigned(0);
                return;
            }
            int index = indexOf(value);
            if (index >= 0) {
                putUnsigned(index + 2L);
                return;
            }
            indexes.put(value, texts.size());
            texts.add(value);
            putUnsigned(1);
            utf8(value);
        }

        private int indexOf(String value) {
            int scanned = Math.min(texts.size(), SCANNED_TEXTS);
            for (int i = 0; i < scanned; i++) {
                if (texts.get(i) == value) {
                    return i;
                }
            }
            Integer index = indexes.get(value);
            return index == null ? -1 : index;
        }

        /** A text: 0 when absent, else its UTF-8 length + 1 and its bytes. */
        private void text(String value) {
            if (value == null) {
                putUnsigned(0);
                return;
            }
            if (!ascii(value)) {
                byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
                putUnsigned(utf8.length + 1L);
                putBytes(utf8);
                return;
            }
            putUnsigned(value.length() + 1L);
            putAscii(value);
        }

        /** A text's UTF-8 length and bytes. */
        private void utf8(String value) {
            if (!ascii(value)) {
                byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
                putUnsigned(utf8.length);
                putBytes(utf8);
                return;
            }
            putUnsigned(value.length());
            putAscii(value);
        }

        private static boolean ascii(String value) {
            for (int i = 0; i < value.length(); i++) {
                if (value.charAt(i) >= 0x80) {
                    return false;
                }
            }
            return true;
        }

        /** An ASCII text's bytes, copied char by char: a key's {@code getBytes} made an array each record. */
        private void putAscii(String value) {
            int length = value.length();
            room(length);
            for (int i = 0; i < length; i++) {
                bytes[size + i] = (byte) value.charAt(i);
            }
            size += length;
        }

        private void putBytes(byte[] value) {
            room(value.length);
            System.arraycopy(value, 0, bytes, size, value.length);
            size += value.length;
        }

        private void putByte(byte value) {
            room(1);
            bytes[size++] = value;
        }

        /** Zigzagged, so that a small negative number (a partition of -1) is a byte too. */
        private void putSigned(long value) {
            putUnsigned((value << 1) ^ (value >> 63));
        }

        /** Unsigned LEB128: seven bits a byte, the high bit set on all but the last. */
        private void putUnsigned(long value) {
            room(10);
            while ((value & ~0x7fL) != 0) {
                bytes[size++] = (byte) ((value & 0x7f) | 0x80);
                value >>>= 7;
            }
            bytes[size++] = (byte) value;
        }

        private void room(int more) {
            if (size + more > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + more));
            }
        }

        /** The body written so far as a batch; this body is then empty, its buffer kept for the next. */
        JournalBatch done() {
            INT.set(bytes, 0, count);
            JournalBatch batch = new JournalBatch(Arrays.copyOf(bytes, size), count, firstAt);
            size = 4;
            count = 0;
            lastAt = 0;
            lastLedger = 0;
            lastEntry = 0;
            texts.clear();
            indexes.clear();
            return batch;
        }
    }
}
