package dev.settle.runtime.http;

import dev.settle.runtime.http.Refusals.Reason;
import java.io.IOException;
import java.net.InetAddress;
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
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Serves one port: a selector thread gathers request heads, a fixed pool of workers answers them, and the probe
 * paths have a pool of their own.
 *
 * <p>A connection holds no worker until its whole head has arrived, within {@link Limits#headDeadline()}; a silent
 * or trickling client costs a socket and a small buffer, and is dropped at the deadline, or earlier when
 * {@link Limits#maxPending()} newer connections need the room. Once a worker has the request, each read of the body
 * waits at most {@link Limits#idleTimeout()} for its next byte and the answer must be taken within that time too.
 * Each answer closes its connection ({@code Connection: close}), so no idle keep-alive connection holds anything.
 * A body the handler left unread is read away by the selector thread after the answer, never by a worker: a client
 * that announces a body and never sends it holds no thread (issue 40: 60 of them held the probe port's workers).
 * Refused requests are counted and logged through the port's {@link Refusals}.
 *
 * <p>Thread-safe; {@link #close()} may be called from any thread.
 */
public final class HttpService implements AutoCloseable {
    /** Read away, unlooked at, of a body left unread, so that closing does not reset the answer away (RFC 9112 §9.6). */
    private static final long DISCARDED = 1024 * 1024;
    /** How long, at most, the selector thread reads away a body left unread before closing its connection. */
    static final Duration DISCARD_TIME = Duration.ofSeconds(2);

    private final String name;
    private final Limits limits;
    private final Handler handler;
    private final Logger log;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final ThreadPoolExecutor workers;
    /** The probe paths' own workers; null without probe paths. */
    private final ThreadPoolExecutor probeWorkers;

    private final Set<String> probePaths;
    private final Refusals refusals;
    private final Thread acceptor;
    /** Connections still sending their head, oldest first; the selector thread's alone. */
    private final Map<SocketChannel, Pending> pending = new LinkedHashMap<>();
    /** Answered connections whose unread body is being read away, oldest first; the selector thread's alone. */
    private final Map<SocketChannel, Lingering> lingering = new LinkedHashMap<>();
    /** Answered connections handed over by the workers, for the selector thread to read away. */
    private final Queue<SocketChannel> toLinger = new ConcurrentLinkedQueue<>();
    /** The selector thread's buffer for bodies read away. */
    private final ByteBuffer discarded = ByteBuffer.allocate(16 * 1024);

    private final AtomicLong dropped = new AtomicLong();
    private volatile boolean open = true;

    private HttpService(
            String name,
            Limits limits,
            Set<String> probePaths,
            Handler handler,
            Refusals refusals,
            Logger log,
            ServerSocketChannel server,
            Selector selector) {
        this.name = name;
        this.limits = limits;
        this.probePaths = Set.copyOf(probePaths);
        this.handler = handler;
        this.refusals = refusals;
        this.log = log;
        this.server = server;
        this.selector = selector;
        this.workers = pool(limits.workers(), limits.queued(), "settle-" + name + "-");
        this.probeWorkers = probePaths.isEmpty()
                ? null
                : pool(limits.probeWorkers(), limits.probeQueued(), "settle-" + name + "-probe-");
        this.acceptor = daemon(this::acceptLoop, "settle-" + name + "-accept");
    }

    private static ThreadPoolExecutor pool(int threads, int queued, String prefix) {
        AtomicInteger started = new AtomicInteger();
        return new ThreadPoolExecutor(
                threads,
                threads,
                0,
                TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(queued),
                task -> daemon(task, prefix + started.incrementAndGet()));
    }

    /**
     * Binds {@code address} (port 0: a free port) and serves {@code handler}; log lines go to {@code log}, the
     * owner's logger, so they name what the port is for.
     *
     * @throws IOException when the address cannot be bound
     */
    public static HttpService start(String name, InetSocketAddress address, Limits limits, Handler handler, Logger log)
            throws IOException {
        return start(name, address, limits, Set.of(), handler, new Refusals(name, log, reason -> {}), log);
    }

    /**
     * As {@link #start(String, InetSocketAddress, Limits, Handler, Logger)}; requests for one of {@code probePaths}
     * (exact paths, without the query) are answered by workers of their own ({@link Limits#probeWorkers()}), and
     * refused requests are counted and logged by {@code refusals}.
     *
     * @throws IOException when the address cannot be bound
     */
    public static HttpService start(
            String name,
            InetSocketAddress address,
            Limits limits,
            Set<String> probePaths,
            Handler handler,
            Refusals refusals,
            Logger log)
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
        HttpService service = new HttpService(name, limits, probePaths, handler, refusals, log, server, selector);
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
        if (probeWorkers != null) {
            // Probes are answered at once: nothing of theirs is worth waiting for.
            probeWorkers.shutdownNow();
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
        // A worker may have handed one over after the selector thread's last look.
        SocketChannel late;
        while ((late = toLinger.poll()) != null) {
            closeQuietly(late);
        }
    }

    private void acceptLoop() {
        try {
            while (open) {
                selector.select(nextWait());
                adoptLingering();
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
                        } else if (key.isReadable() && key.attachment() instanceof Lingering body) {
                            discard((SocketChannel) key.channel(), key, body);
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
            lingering.keySet().forEach(HttpService::closeQuietly);
            lingering.clear();
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
            lingering.remove(channel);
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
        // The oldest of each kind has its nearest deadline: all of a kind have the same allowance.
        long nearest = Long.MAX_VALUE;
        if (!pending.isEmpty()) {
            nearest = pending.values().iterator().next().deadlineNanos - System.nanoTime();
        }
        if (!lingering.isEmpty()) {
            nearest = Math.min(nearest, lingering.values().iterator().next().deadlineNanos - System.nanoTime());
        }
        if (nearest == Long.MAX_VALUE) {
            return 0;
        }
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(nearest) + 1);
    }

    private void accept() throws IOException {
        SocketChannel channel;
        while ((channel = server.accept()) != null) {
            if (pending.size() >= limits.maxPending()) {
                Iterator<SocketChannel> oldest = pending.keySet().iterator();
                tooSlow(oldest.next());
                oldest.remove();
            }
            try {
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                Pending head = new Pending(
                        new byte[limits.maxHeadBytes()],
                        System.nanoTime() + limits.headDeadline().toNanos());
                channel.register(selector, SelectionKey.OP_READ, head);
                pending.put(channel, head);
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
                refusals.refused(Reason.MALFORMED, peerOf(channel));
                refuse(channel, 431, "the request head is longer than " + limits.maxHeadBytes() + " bytes\n");
            }
            return;
        }
        forget(channel, key);
        RequestHead parsed;
        try {
            parsed = RequestHead.parse(head.bytes, end);
        } catch (IllegalArgumentException e) {
            refusals.refused(Reason.MALFORMED, peerOf(channel));
            refuse(channel, 400, "bad request: " + e.getMessage() + "\n");
            return;
        }
        ByteBuffer early = ByteBuffer.wrap(head.bytes, end, head.length - end).slice();
        InetAddress peer = peerOf(channel);
        boolean probe = probeWorkers != null && probePaths.contains(path(parsed.target()));
        ThreadPoolExecutor pool = probe ? probeWorkers : workers;
        try {
            pool.execute(() -> serve(channel, parsed, peer, early));
        } catch (RejectedExecutionException e) {
            refusals.refused(Reason.BUSY, peer);
            refuse(
                    channel,
                    503,
                    "busy: " + pool.getMaximumPoolSize() + " requests under way and "
                            + pool.getQueue().size() + " waiting; try again\n");
        }
    }

    private static String path(String target) {
        int query = target.indexOf('?');
        return query < 0 ? target : target.substring(0, query);
    }

    private static InetAddress peerOf(SocketChannel channel) {
        return channel.socket().getInetAddress();
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
            // No answer: a client this slow is not waiting for one, and writing could block this thread.
            tooSlow(entry.getKey());
            entries.remove();
        }
        Iterator<Map.Entry<SocketChannel, Lingering>> answered =
                lingering.entrySet().iterator();
        while (answered.hasNext()) {
            Map.Entry<SocketChannel, Lingering> entry = answered.next();
            if (entry.getValue().deadlineNanos - now > 0) {
                break;
            }
            // Answered already: a body that does not come within the discard time is not worth waiting for.
            closeQuietly(entry.getKey());
            answered.remove();
        }
    }

    /** Drops a connection that did not send its head in time, or is the oldest when room is needed. */
    private void tooSlow(SocketChannel channel) {
        refusals.refused(Reason.TOO_SLOW, peerOf(channel));
        // Counted before the close, so that whoever sees the connection end sees it counted.
        dropped.incrementAndGet();
        closeQuietly(channel);
    }

    /**
     * Takes over the connections the workers answered with their body unread. Reading it away, rather than closing
     * at once, keeps TCP from resetting the connection while the client still sends, which can destroy the answer
     * before the client reads it (RFC 9112 §9.6); doing it here keeps it off the workers.
     */
    private void adoptLingering() {
        SocketChannel channel;
        while ((channel = toLinger.poll()) != null) {
            if (lingering.size() >= limits.maxPending()) {
                Iterator<SocketChannel> oldest = lingering.keySet().iterator();
                closeQuietly(oldest.next());
                oldest.remove();
            }
            Lingering body = new Lingering(System.nanoTime() + DISCARD_TIME.toNanos());
            try {
                channel.register(selector, SelectionKey.OP_READ, body);
                lingering.put(channel, body);
            } catch (IOException | RuntimeException e) {
                closeQuietly(channel);
            }
        }
    }

    /** Reads away what has arrived of an answered request's body; closes at its end or past {@link #DISCARDED}. */
    private void discard(SocketChannel channel, SelectionKey key, Lingering body) {
        int read;
        do {
            discarded.clear();
            try {
                read = channel.read(discarded);
            } catch (IOException e) {
                read = -1;
            }
            if (read > 0) {
                body.discarded += read;
            }
        } while (read > 0 && body.discarded < DISCARDED);
        if (read < 0 || body.discarded >= DISCARDED) {
            key.cancel();
            lingering.remove(channel);
            closeQuietly(channel);
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

    private void serve(SocketChannel channel, RequestHead head, InetAddress peer, ByteBuffer early) {
        long deadline = System.nanoTime() + limits.idleTimeout().toNanos();
        try (Connection connection = new Connection(channel, early)) {
            Request request = new Request(
                    head.method(), head.target(), head.headers(), peer, connection, limits.idleTimeout(), deadline);
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
                if (request.bodyLeft() && open) {
                    connection.shutdownOutput();
                    toLinger.add(connection.release());
                    selector.wakeup();
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

    /** An answered request's body being read away: how much so far, and when to give up. */
    private static final class Lingering {
        final long deadlineNanos;
        long discarded;

        Lingering(long deadlineNanos) {
            this.deadlineNanos = deadlineNanos;
        }
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
