package dev.settle.runtime.http;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;

/** A body of a {@code Content-Length}: exactly that many bytes, an error if the client stops short. */
final class FixedLengthInput extends InputStream implements Request.BodyInput {
    private final Connection connection;
    private final Duration idle;
    private long left;

    FixedLengthInput(Connection connection, long length, Duration idle) {
        this.connection = connection;
        this.left = length;
        this.idle = idle;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] into, int offset, int length) throws IOException {
        if (left == 0) {
            return -1;
        }
        int read = connection.read(into, offset, (int) Math.min(length, left), idle);
        if (read < 0) {
            throw new ClientGoneException("the client closed the connection " + left + " bytes before the body's end");
        }
        left -= read;
        return read;
    }

    @Override
    public boolean finished() {
        return left == 0;
    }
}
