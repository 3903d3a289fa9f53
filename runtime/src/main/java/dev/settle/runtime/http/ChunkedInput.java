package dev.settle.runtime.http;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;

/** A body sent {@code Transfer-Encoding: chunked} (RFC 9112 §7.1), decoded; chunk extensions and trailers ignored. */
final class ChunkedInput extends InputStream implements Request.BodyInput {
    private static final int MAX_LINE = 4096;

    private final Connection connection;
    private final Duration idle;
    private final byte[] one = new byte[1];
    private long chunkLeft;
    private boolean finished;

    ChunkedInput(Connection connection, Duration idle) {
        this.connection = connection;
        this.idle = idle;
    }

    @Override
    public int read() throws IOException {
        byte[] single = new byte[1];
        return read(single, 0, 1) < 0 ? -1 : single[0] & 0xff;
    }

    @Override
    public int read(byte[] into, int offset, int length) throws IOException {
        if (finished) {
            return -1;
        }
        if (chunkLeft == 0) {
            String size = line();
            int extension = size.indexOf(';');
            try {
                chunkLeft = Long.parseLong((extension < 0 ? size : size.substring(0, extension)).strip(), 16);
            } catch (NumberFormatException e) {
                throw new ClientGoneException("a malformed chunk size in the request body");
            }
            if (chunkLeft < 0) {
                throw new ClientGoneException("a malformed chunk size in the request body");
            }
            if (chunkLeft == 0) {
                while (!line().isEmpty()) {
                    // Trailer fields: not used.
                }
                finished = true;
                return -1;
            }
        }
        int read = connection.read(into, offset, (int) Math.min(length, chunkLeft), idle);
        if (read < 0) {
            throw new ClientGoneException("the client closed the connection inside a chunk");
        }
        chunkLeft -= read;
        if (chunkLeft == 0 && !line().isEmpty()) {
            throw new ClientGoneException("a chunk of the request body does not end where its size says");
        }
        return read;
    }

    private String line() throws IOException {
        StringBuilder line = new StringBuilder();
        while (true) {
            if (connection.read(one, 0, 1, idle) < 0) {
                throw new ClientGoneException("the client closed the connection inside the chunked body");
            }
            if (one[0] == '\n') {
                int end = line.length();
                return end > 0 && line.charAt(end - 1) == '\r' ? line.substring(0, end - 1) : line.toString();
            }
            if (line.length() >= MAX_LINE) {
                throw new ClientGoneException("a chunk line of the request body is longer than " + MAX_LINE + " bytes");
            }
            line.append((char) (one[0] & 0xff));
        }
    }

    @Override
    public boolean finished() {
        return finished;
    }
}
