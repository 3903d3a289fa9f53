package dev.settle.runtime.http;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/** A request line and its headers, parsed from the bytes before the blank line; or why they cannot be. */
record RequestHead(String method, String target, Map<String, String> headers) {

    /** The end of the head in {@code bytes[0, length)} (the index after its blank line), or -1. */
    static int end(byte[] bytes, int from, int length) {
        for (int i = Math.max(0, from - 3); i < length; i++) {
            if (bytes[i] == '\n') {
                if (i + 1 < length && bytes[i + 1] == '\n') {
                    return i + 2;
                }
                if (i + 2 < length && bytes[i + 1] == '\r' && bytes[i + 2] == '\n') {
                    return i + 3;
                }
            }
        }
        return -1;
    }

    /**
     * @throws IllegalArgumentException saying what is wrong, for a 400
     */
    static RequestHead parse(byte[] bytes, int length) {
        String text = new String(bytes, 0, length, StandardCharsets.ISO_8859_1);
        String[] lines = text.split("\r?\n");
        // A head of a blank line alone splits into nothing (split drops trailing empty strings).
        if (lines.length == 0 || lines[0].isEmpty()) {
            throw new IllegalArgumentException("an empty request line");
        }
        String[] request = lines[0].split(" ", -1);
        if (request.length != 3 || request[0].isEmpty() || !request[1].startsWith("/")) {
            throw new IllegalArgumentException("a malformed request line");
        }
        if (!request[2].equals("HTTP/1.1") && !request[2].equals("HTTP/1.0")) {
            throw new IllegalArgumentException("HTTP/1.1 or HTTP/1.0 only");
        }
        Map<String, String> headers = new HashMap<>();
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i];
            int colon = line.indexOf(':');
            if (colon <= 0 || line.charAt(0) == ' ' || line.charAt(0) == '\t' || line.charAt(colon - 1) == ' ') {
                throw new IllegalArgumentException("a malformed header line");
            }
            headers.put(
                    line.substring(0, colon).toLowerCase(Locale.ROOT),
                    line.substring(colon + 1).strip());
        }
        String encoding = headers.get("transfer-encoding");
        String length2 = headers.get("content-length");
        if (encoding != null && !encoding.equalsIgnoreCase("chunked")) {
            throw new IllegalArgumentException("Transfer-Encoding other than chunked");
        }
        if (encoding != null && length2 != null) {
            throw new IllegalArgumentException("both Content-Length and Transfer-Encoding");
        }
        if (length2 != null && !length2.strip().matches("[0-9]{1,18}")) {
            throw new IllegalArgumentException("a malformed Content-Length");
        }
        return new RequestHead(request[0], request[1], Map.copyOf(headers));
    }
}
