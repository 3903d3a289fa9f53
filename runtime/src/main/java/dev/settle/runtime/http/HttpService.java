package dev.settle.runtime.http;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Serves one port: a selector thread gathers request heads, a fixed pool of workers answers them.
 *
 * <p>A connection holds no worker until its whole head has arrived, within {@link Limits#headDeadline()}; a silent
 * or trickling client costs a socket and a small buffer, and is dropped at the deadline, or earlier when
 * {@link Limits#maxPending()} newer connections need the room. Once a worker has the request, each read of the body
 * waits at most {@link Limits#idleTimeout()} for its next byte and the answer must be taken within that time too.
 * Each answer closes its connection ({@code Connection: close}), so no idle keep-alive connection holds anything.
 *
 * <p>Thread-safe; {@link #close()} may be called from any thread.
 */
public final class HttpService implements AutoCloseable {
    /** Read away, unlooked at, of a body left unread, so that closing does not reset the answer away (RFC 9112 §9.6). */
    private static final long DISCARDED = 1024 * 1024;
    /** How long, at most, a worker spends reading away a body left unread. */
    static final Duration DISCARD_TIME = Duration.ofSeconds(2);

    private final String name;
    private final Limits limits;
    private final Handler handler;
    private final Logger log;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final ThreadPoolExecutor workers;
    private final Thread acceptor;
    /** Connections still sending their head, oldest first; the selector thread's alone. */
    private final Map<SocketChannel, Pending> pending = new LinkedHashMap<>();

    private final AtomicLong dropped = new AtomicLong();
    private volatile boolean open = true;

    private HttpService(
            String name, Limits limits, Handler handler, Logger log, ServerSocketChannel server, Selector selector) {
        this.name = name;
        this.limits = limits;
        this.handler = handler;
        this.log = log;
        this.server = server;
        this.selector = selector;
        AtomicInteger threads = new AtomicInteger();
        this.workers = new ThreadPoolExecutor(
                limits.workers(),
                limits.workers(),
                0,
                TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(limits.queued()),
                task -> daemon(task, "settle-" + name + "-" + threads.incrementAndGet()));
        this.acceptor = daemon(this::acceptLoop, "settle-" + name + "-accept");
    }

    /**
     * Binds {@code address} (port 0: a free port) and serves {@code handler}; log lines go to {@code log}, the
     * owner's logger, so they name what the port is for.
     *
     * @throws IOException when the address cannot be bound
     */
    public static HttpService start(String name, InetSocketAddress address, Limits limits, Handler handler, Logger log)
            throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open();
        Selector selector;
        try {
            server.bind(address, 128);
            server.configureBlocking(false);
            selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
        HttpService service = new HttpService(name, limits, handler, log, server, selector);
        service.acceptor.start();
        return service;
    }

    /** The bound port. */
    public int port() {
        return server.socket().getLocalPort();
    }

    /** Connections dropped so far for being too slow with their head, or to make room for newer ones. */
    public long dropped() {
        return dropped.get();
    }

    /** Stops at once: no new connection, none pending; requests under way are interrupted. Idempotent. */
    @Override
    public void close() {
        stop(Duration.ZERO);
    }

    /**
     * Stops taking connections, then waits up to {@code grace} for the requests under way to finish (an upload's
     * swap is done, or not begun) before interrupting them. Idempotent.
     */
    public void stop(Duration grace) {
        open = false;
        selector.wakeup();
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        workers.shutdown();
        try {
            if (!grace.isZero() && !workers.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                log.warn("{}: a request still runs {} after the stop began; stopping without it", name, grace);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        workers.shutdownNow();
    }

    private void acceptLoop() {
        try {
            while (open) {
                selector.select(nextWait());
                Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext()) {
                    SelectionKey key = keys.next();
                    keys.remove();
                    if (!key.isValid()) {
                        continue;
                    }
                    try {
                        if (key.isAcceptable()) {
                            accept();
                        } else if (key.isReadable()) {
                            readHead((SocketChannel) key.channel(), key);
                        }
                    } catch (IOException | RuntimeException e) {
                        // One connection's trouble, or no file descriptor left to accept with: never the end of the
                        // port, or a client could stop the probes with one odd request.
                        failedOnce(key, e);
                    }
                }
                expire();
            }
        } catch (IOException | RuntimeException e) {
            if (open) {
                log.error("{}: the accept loop stopped; the port no longer answers", name, e);
            }
        } finally {
            pending.keySet().forEach(HttpService::closeQuietly);
            pending.clear();
            closeQuietly(server);
            try {
                selector.close();
            } catch (IOException ignored) {
                // Nothing left to serve either way.
            }
        }
    }

    private void failedOnce(SelectionKey key, Exception e) {
        if (key.channel() instanceof SocketChannel channel) {
            pending.remove(channel);
            key.cancel();
            closeQuietly(channel);
            log.warn("{}: dropped a connection whose request could not be read ({})", name, e.toString());
        } else {
            log.warn("{}: cannot accept a connection now ({}); trying again in 100 ms", name, e.toString());
            try {
                Thread.sleep(100);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private long nextWait() {
        if (pending.isEmpty()) {
            return 0;
        }
        // The oldest pending connection has the nearest deadline: all have the same allowance.
        long left = pending.values().iterator().next().deadlineNanos - System.nanoTime();
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(left) + 1);
    }

    private void accept() throws IOException {
        SocketChannel channel;
        while ((channel = server.accept()) != null) {
            if (pending.size() >= limits.maxPending()) {
                Iterator<SocketChannel> oldest = pending.keySet().iterator();
                // Counted before the close, so that whoever sees the connection end sees it counted.
                dropped.incrementAndGet();
                closeQuietly(oldest.next());
                oldest.remove();
            }
            try {
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                channel.register(selector, SelectionKey.OP_READ);
                pending.put(
                        channel,
                        new Pending(
                                new byte[limits.maxHeadBytes()],
                                System.nanoTime() + limits.headDeadline().toNanos()));
            } catch (IOException e) {
                closeQuietly(channel);
            }
        }
    }

    private void readHead(SocketChannel channel, SelectionKey key) {
        Pending head = pending.get(channel);
        if (head == null) {
            key.cancel();
            closeQuietly(channel);
            return;
        }
        int read;
        try {
            read = channel.read(ByteBuffer.wrap(head.bytes, head.length, head.bytes.length - head.length));
        } catch (IOException e) {
            read = -1;
        }
        if (read < 0) {
            forget(channel, key);
            closeQuietly(channel);
            return;
        }
        int from = head.length;
        head.length += read;
        int end = RequestHead.end(head.bytes, from, head.length);
        if (end < 0) {
            if (head.length == head.bytes.length) {
                forget(channel, key);
                refuse(channel, 431, "the request head is longer than " + limits.maxHeadBytes() + " bytes\n");
            }
            return;
        }
        forget(channel, key);
        RequestHead parsed;
        try {
            parsed = RequestHead.parse(head.bytes, end);
        } catch (IllegalArgumentException e) {
            refuse(channel, 400, "bad request: " + e.getMessage() + "\n");
            return;
        }
        ByteBuffer early = ByteBuffer.wrap(head.bytes, end, head.length - end).slice();
        try {
            workers.execute(() -> serve(channel, parsed, early));
        } catch (RejectedExecutionException e) {
            refuse(
                    channel,
                    503,
                    "busy: " + limits.workers() + " requests under way and " + limits.queued()
                            + " waiting; try again\n");
        }
    }

    private void forget(SocketChannel channel, SelectionKey key) {
        key.cancel();
        pending.remove(channel);
    }

    private void expire() {
        long now = System.nanoTime();
        Iterator<Map.Entry<SocketChannel, Pending>> entries = pending.entrySet().iterator();
        while (entries.hasNext()) {
            Map.Entry<SocketChannel, Pending> entry = entries.next();
            if (entry.getValue().deadlineNanos - now > 0) {
                break;
            }
            // No answer: a client this slow is not waiting for one, and writing could block this thread. Counted
            // before the close, so that whoever sees the connection end sees it counted.
            dropped.incrementAndGet();
            closeQuietly(entry.getKey());
            entries.remove();
        }
    }

    /** A short answer from the selector thread: one non-blocking write, whatever fits, then closed. */
    private void refuse(SocketChannel channel, int status, String body) {
        try {
            channel.write(ByteBuffer.wrap(head(Response.text(status, body), false)));
        } catch (IOException ignored) {
            // Best effort: the connection is closed next either way.
        }
        closeQuietly(channel);
    }

    private void serve(SocketChannel channel, RequestHead head, ByteBuffer early) {
        long deadline = System.nanoTime() + limits.idleTimeout().toNanos();
        try (Connection connection = new Connection(channel, early)) {
            Request request = new Request(
                    head.method(), head.target(), head.headers(), connection, limits.idleTimeout(), deadline);
            Response response;
            try {
                response = handler.handle(request);
            } catch (ClientGoneException e) {
                wentAway(head, e);
                return;
            } catch (IOException | RuntimeException e) {
                // The server's own fault (a disk that is full, a bug): worth a stack.
                log.error("{}: answering {} {} failed", name, head.method(), head.target(), e);
                response = Response.text(500, "internal error; the runtime's log has the details\n");
            }
            try {
                boolean withBody = !head.method().equals("HEAD");
                long answerBy = System.nanoTime() + limits.idleTimeout().toNanos();
                connection.write(ByteBuffer.wrap(head(response, withBody)), answerBy);
                if (request.bodyLeft()) {
                    connection.shutdownOutput();
                    discard(connection);
                }
            } catch (IOException e) {
                wentAway(head, e);
            }
        }
    }

    private void wentAway(RequestHead head, IOException e) {
        // A probe that timed out, a scraper that gave up, an upload cut off: the client's affair, not a fault here,
        // and one line each (a stack at each one flooded the log).
        log.debug("{}: answering {} {}: the client went away ({})", name, head.method(), head.target(), e.toString());
    }

    private static void discard(Connection connection) {
        byte[] buffer = new byte[16 * 1024];
        long discarded = 0;
        // A deadline for the whole of it, not per read: a body trickled a byte a second would otherwise hold this
        // worker for days, without a token, and four of them would starve the port.
        long discardBy = System.nanoTime() + DISCARD_TIME.toNanos();
        try {
            while (discarded < DISCARDED) {
                long left = discardBy - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                int read = connection.read(buffer, 0, buffer.length, Duration.ofNanos(Math.max(left, 1_000_000)));
                if (read < 0) {
                    return;
                }
                discarded += read;
            }
        } catch (IOException e) {
            // The client stopped sending or hung up: the answer is out either way.
        }
    }

    private static byte[] head(Response response, boolean withBody) {
        StringBuilder head = new StringBuilder()
                .append("HTTP/1.1 ")
                .append(response.status())
                .append(' ')
                .append(reason(response.status()))
                .append("\r\nContent-Type: ")
                .append(response.contentType())
                .append("\r\nContent-Length: ")
                .append(response.body().length)
                .append("\r\nConnection: close\r\n");
        response.headers()
                .forEach((name, value) ->
                        head.append(name).append(": ").append(value).append("\r\n"));
        head.append("\r\n");
        byte[] start = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        if (!withBody) {
            return start;
        }
        byte[] all = new byte[start.length + response.body().length];
        System.arraycopy(start, 0, all, 0, start.length);
        System.arraycopy(response.body(), 0, all, start.length, response.body().length);
        return all;
    }

    private static String reason(int status) {
        switch (status) {
            case 200:
                return "OK";
            case 400:
                return "Bad Request";
            case 401:
                return "Unauthorized";
            case 404:
                return "Not Found";
            case 405:
                return "Method Not Allowed";
            case 409:
                return "Conflict";
            case 413:
                return "Content Too Large";
            case 429:
                return "Too Many Requests";
            case 431:
                return "Request Header Fields Too Large";
            case 500:
                return "Internal Server Error";
            case 503:
                return "Service Unavailable";
            default:
                return "Status";
        }
    }

    private static void closeQuietly(java.io.Closeable closeable) {
        try {
            closeable.close();
        } catch (IOException ignored) {
            // Gone either way.
        }
    }

    private static Thread daemon(Runnable task, String name) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        return thread;
    }

    /** A head under way: its bytes so far and when it must be complete. */
    private static final class Pending {
        final byte[] bytes;
        final long deadlineNanos;
        int length;

        Pending(byte[] bytes, long deadlineNanos) {
            this.bytes = bytes;
            this.deadlineNanos = deadlineNanos;
        }
    }
}
