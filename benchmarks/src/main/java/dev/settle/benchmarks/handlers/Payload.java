package dev.settle.benchmarks.handlers;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** A benchmark message: 100 bytes, its index in decimal first, so a handler can tell messages apart cheaply. */
public final class Payload {
    public static final int SIZE = 100;

    private Payload() {}

    public static byte[] of(int index) {
        byte[] payload = new byte[SIZE];
        Arrays.fill(payload, (byte) '.');
        byte[] digits = Integer.toString(index).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(digits, 0, payload, 0, digits.length);
        return payload;
    }

    /** The index {@link #of} wrote; allocates nothing. */
    public static int index(byte[] payload) {
        int index = 0;
        for (byte b : payload) {
            if (b < '0' || b > '9') {
                break;
            }
            index = index * 10 + (b - '0');
        }
        return index;
    }
}
