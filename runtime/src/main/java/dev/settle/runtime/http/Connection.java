package dev.settle.runtime.http;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;

/**
 * One accepted connection on a worker thread: reads and writes on a non-blocking channel, each wait bounded. A
 * blocking socket's {@code SO_TIMEOUT} would bound reads only; a client that does not take its answer would hold the
 * worker in {@code write} for as long as it likes.
 */
final class Connection implements Closeable {
    private final SocketChannel channel;
    /** Bytes that arrived behind the request head, read before the channel. */
    private final ByteBuffer early;

    private Selector waits;
    private SelectionKey key;
    private boolean released;

    Connection(SocketChannel channel, ByteBuffer early) {
        this.channel = channel;
        this.early = early;
    }

    /** Up to {@code length} bytes, at least one; -1 at the end of the stream. */
    int read(byte[] into, int offset, int length, Duration idle) throws IOException {
        if (length == 0) {
            return 0;
        }
        if (early.hasRemaining()) {
            int count = Math.min(length, early.remaining());
            early.get(into, offset, count);
            return count;
        }
        ByteBuffer target = ByteBuffer.wrap(into, offset, length);
        try {
            while (true) {
                int read = channel.read(target);
                if (read != 0) {
                    return read;
                }
                await(SelectionKey.OP_READ, idle.toMillis(), "no byte of the request for " + idle);
            }
        } catch (ClientGoneException e) {
            throw e;
        } catch (IOException e) {
            throw new ClientGoneException(e);
        }
    }

    /** Writes all of {@code bytes} by {@code deadlineNanos} (a {@link System#nanoTime()} value). */
    void write(ByteBuffer bytes, long deadlineNanos) throws IOException {
        try {
            while (bytes.hasRemaining()) {
                if (channel.write(bytes) == 0) {
                    long left = (deadlineNanos - System.nanoTime()) / 1_000_000;
                    if (left <= 0) {
                        throw new ClientGoneException("the client did not take the answer in time");
                    }
                    await(SelectionKey.OP_WRITE, left, "the client did not take the answer in time");
                }
            }
        } catch (ClientGoneException e) {
            throw e;
        } catch (IOException e) {
            throw new ClientGoneException(e);
        }
    }

    /** Half-closes: the client sees the end of the answer while its own last bytes can still arrive. */
    void shutdownOutput() throws IOException {
        channel.shutdownOutput();
    }

    /**
     * Gives up the channel without closing it (the server's selector reads its unread body away); {@link #close()}
     * then leaves it open.
     */
    SocketChannel release() {
        closeWaits();
        released = true;
        return channel;
    }

    private void await(int operation, long millis, String timeout) throws IOException {
        if (waits == null) {
            waits = Selector.open();
            key = channel.register(waits, operation);
        } else {
            key.interestOps(operation);
        }
        if (waits.select(Math.max(1, millis)) == 0) {
            throw new ClientGoneException(timeout);
        }
        waits.selectedKeys().clear();
    }

    @Override
    public void close() {
        closeWaits();
        if (released) {
            return;
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // The connection is gone either way.
        }
    }

    private void closeWaits() {
        try {
            if (waits != null) {
                // Closing the selector deregisters the channel from it; the channel stays open.
                waits.close();
                waits = null;
            }
        } catch (IOException ignored) {
            // Closing a private selector: nothing to do about it.
        }
    }
}
