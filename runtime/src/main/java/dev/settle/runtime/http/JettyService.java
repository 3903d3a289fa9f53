package dev.settle.runtime.http;

import dev.settle.runtime.http.Refusals.Reason;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;

/**
 * Serves one port with Jetty (issue 40): Jetty's own small thread pool parses requests without blocking, and hands
 * each complete request to a fixed pool of workers of this port's, the probe paths to a pool of their own.
 *
 * <p>Jetty's threads never run a handler: they accept, read heads and bodies as they come and write answers, so a
 * slow client holds none of them. A connection must send its whole head within {@link Limits#headDeadline()}, or
 * it is closed without an answer, as is the oldest still sending its head when {@link Limits#maxPending()} newer
 * ones need the room. A body read waits at most {@link Limits#idleTimeout()} for its next byte, and so does an
 * answer the client does not take. Every answer closes its connection ({@code Connection: close}); what a handler
 * left of a body is read away before the answer goes, on Jetty's threads and for a bounded time ({@link UnreadBody}),
 * so that a client still sending it reads the answer rather than a reset connection. Answers carry no
 * {@code Server} or {@code Date} header, and an error answer no stack trace. Refused requests are counted and
 * logged through the port's {@link Refusals}.
 *
 * <p>Thread-safe; {@link #close()} may be called from any thread.
 */
public final class JettyService implements AutoCloseable {
    /** Jetty's own threads per port: one accepts, one selects, the rest parse, dispatch and write; none block. */
    static final int JETTY_THREADS = 6;

    private final String name;
    private final Limits limits;
    private final Handler handler;
    private final Logger log;
    private final Set<String> probePaths;
    private final Refusals refusals;
    private final ThreadPoolExecutor workers;
    /** The probe paths' own workers; null without probe paths. */
    private final ThreadPoolExecutor probeWorkers;

    private final Server server;
    private final ServerConnector connector;
    /** Connections still sending their head, oldest first, with the task that drops them at their deadline. */
    private final Map<Connection, Scheduler.Task> pending = new LinkedHashMap<>();

    private final AtomicLong dropped = new AtomicLong();

    private JettyService(
            String name, Limits limits, Set<String> probePaths, Handler handler, Refusals refusals, Logger log) {
        this.name = name;
        this.limits = limits;
        this.probePaths = Set.copyOf(probePaths);
        this.handler = handler;
        this.refusals = refusals;
        this.log = log;
        this.workers = pool(limits.workers(), limits.queued(), "settle-" + name + "-");
        this.probeWorkers = probePaths.isEmpty()
                ? null
                : pool(limits.probeWorkers(), limits.probeQueued(), "settle-" + name + "-probe-");

        QueuedThreadPool threads = new QueuedThreadPool(JETTY_THREADS, 2, 60_000);
        threads.setName("settle-" + name + "-jetty");
        threads.setDaemon(true);
        // No threads kept aside for "non-blocking" tasks: every task here is one.
        threads.setReservedThreads(0);
        // Jetty's default scheduler thread (idle timeouts, the head deadline) is not a daemon: it would keep a JVM
        // whose ports were not stopped alive.
        server = new Server(threads, new ScheduledExecutorScheduler("settle-" + name + "-jetty-timer", true), null);
        server.setStopTimeout(0);
        server.setErrorHandler(this::error);

        HttpConfiguration config = new HttpConfiguration();
        config.setRequestHeaderSize(limits.maxHeadBytes());
        config.setSendServerVersion(false);
        config.setSendXPoweredBy(false);
        config.setSendDateHeader(false);
        config.setIdleTimeout(limits.idleTimeout().toMillis());
        connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(config));
        connector.setIdleTimeout(limits.idleTimeout().toMillis());
        connector.setAcceptQueueSize(128);
        connector.addEventListener(new HeadDeadline());
        server.addConnector(connector);
        server.setHandler(new Dispatch());
    }

    private static ThreadPoolExecutor pool(int threads, int queued, String prefix) {
        AtomicInteger started = new AtomicInteger();
        return new ThreadPoolExecutor(
                threads, threads, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(queued), task -> {
                    Thread thread = new Thread(task, prefix + started.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
    }

    /**
     * Binds {@code address} (port 0: a free port) and serves {@code handler}; requests for one of {@code probePaths}
     * (exact paths, without the query) are answered by workers of their own ({@link Limits#probeWorkers()}), and
     * refused requests are counted and logged by {@code refusals}; log lines go to {@code log}, the owner's logger.
     *
     * @throws IOException when the address cannot be bound
     */
    public static JettyService start(
            String name,
            InetSocketAddress address,
            Limits limits,
            Set<String> probePaths,
            Handler handler,
            Refusals refusals,
            Logger log)
            throws IOException {
        JettyService service = new JettyService(name, limits, probePaths, handler, refusals, log);
        service.connector.setHost(
                address.getAddress() == null
                        ? address.getHostString()
                        : address.getAddress().getHostAddress());
        service.connector.setPort(address.getPort());
        try {
            service.server.start();
        } catch (IOException e) {
            service.close();
            throw e;
        } catch (Exception e) {
            service.close();
            throw new IOException(e.toString(), e);
        }
        return service;
    }

    /** The bound port. */
    public int port() {
        return connector.getLocalPort();
    }

    /** Requests waiting for a worker (not a probe worker) now: what a test waits on before it fills the queue. */
    int waiting() {
        return workers.getQueue().size();
    }

    /** Connections dropped so far for being too slow with their head, or to make room for newer ones. */
    public long dropped() {
        return dropped.get();
    }

    /** Stops at once: no new connection; requests under way are interrupted. Idempotent. */
    @Override
    public void close() {
        stop(Duration.ZERO);
    }

    /**
     * Stops taking connections, then waits up to {@code grace} for the requests under way to finish (an upload's
     * swap is done, or not begun) before interrupting them. Idempotent.
     */
    public void stop(Duration grace) {
        connector.close();
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
        try {
            server.stop();
        } catch (Exception e) {
            log.warn("{}: stopping the HTTP server: {}", name, e.toString());
        }
    }

    /** Takes a request off Jetty's thread: to a probe worker or a worker, or 503 at once when all are taken. */
    private final class Dispatch extends org.eclipse.jetty.server.Handler.Abstract {
        @Override
        public boolean handle(
                org.eclipse.jetty.server.Request request,
                org.eclipse.jetty.server.Response response,
                Callback callback) {
            headArrived(request.getConnectionMetaData().getConnection());
            InetAddress peer = peerOf(request.getConnectionMetaData().getRemoteSocketAddress());
            String path = request.getHttpURI().getPath();
            if (path == null || !path.startsWith("/")) {
                // Jetty takes "GET x" as a path without its slash; no route here has one.
                refusals.refused(Reason.MALFORMED, peer);
                answer(
                        request,
                        response,
                        callback,
                        Response.text(400, "bad request: the target must be a path starting with '/'\n"),
                        false);
                return true;
            }
            ThreadPoolExecutor pool = probeWorkers != null && probePaths.contains(path) ? probeWorkers : workers;
            try {
                pool.execute(() -> serve(request, response, callback, peer));
            } catch (RejectedExecutionException e) {
                refusals.refused(Reason.BUSY, peer);
                answer(
                        request,
                        response,
                        callback,
                        Response.text(
                                503,
                                "busy: " + pool.getMaximumPoolSize() + " requests under way and "
                                        + pool.getQueue().size() + " waiting; try again\n"),
                        false);
            }
            return true;
        }
    }

    private void serve(
            org.eclipse.jetty.server.Request jetty,
            org.eclipse.jetty.server.Response response,
            Callback callback,
            InetAddress peer) {
        HttpURI uri = jetty.getHttpURI();
        String target = uri.getQuery() == null ? uri.getPath() : uri.getPath() + "?" + uri.getQuery();
        Map<String, String> headers = new HashMap<>();
        for (HttpField field : jetty.getHeaders()) {
            headers.put(field.getName().toLowerCase(Locale.ROOT), field.getValue());
        }
        ClientBody body = new ClientBody(Content.Source.asInputStream(jetty));
        Request request = new Request(jetty.getMethod(), target, headers, peer, body);
        Response answer;
        try {
            answer = handler.handle(request);
        } catch (ClientGoneException e) {
            wentAway(jetty, e);
            callback.failed(e);
            return;
        } catch (IOException | RuntimeException e) {
            // The server's own fault (a disk that is full, a bug): worth a stack, in the log only.
            log.error("{}: answering {} {} failed", name, jetty.getMethod(), target, e);
            answer = Response.text(500, "internal error; the runtime's log has the details\n");
        }
        answer(jetty, response, callback, answer, body.touched);
    }

    /** Sends an answer once what is left of the request's body has been read away ({@link UnreadBody}). */
    private void answer(
            org.eclipse.jetty.server.Request request,
            org.eclipse.jetty.server.Response response,
            Callback callback,
            Response answer,
            boolean bodyRead) {
        Runnable send =
                () -> send(response, callback, answer, !request.getMethod().equals("HEAD"));
        if (!bodyRead && request.getHeaders().contains(HttpHeader.EXPECT, "100-continue")) {
            // The client waits for a word before it sends its body: it has sent none, and this answer is the word.
            send.run();
        } else {
            UnreadBody.dropThen(request, connector.getScheduler(), limits.unreadBodyLongest(), send);
        }
    }

    private void wentAway(org.eclipse.jetty.server.Request request, Throwable e) {
        // A probe that timed out, a scraper that gave up, an upload cut off: the client's affair, not a fault here,
        // and one line each (a stack at each one flooded the log).
        log.debug(
                "{}: answering {} {}: the client went away ({})",
                name,
                request.getMethod(),
                request.getHttpURI().getPathQuery(),
                e.toString());
    }

    /**
     * Writes a whole answer without waiting for the client to take it; the connection closes after it. A client that
     * is gone by then is logged in one debug line.
     */
    private void send(
            org.eclipse.jetty.server.Response response, Callback callback, Response answer, boolean withBody) {
        org.eclipse.jetty.server.Request request = response.getRequest();
        Callback logged = Callback.from(callback::succeeded, failure -> {
            wentAway(request, failure);
            callback.failed(failure);
        });
        response.setStatus(answer.status());
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, answer.contentType());
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, Long.toString(answer.body().length));
        response.getHeaders().put(HttpHeader.CONNECTION, "close");
        answer.headers().forEach((header, value) -> response.getHeaders().put(header, value));
        response.write(true, withBody ? ByteBuffer.wrap(answer.body()) : ByteBuffer.allocate(0), logged);
    }

    /**
     * Jetty's answer to a request it refused before any handler (a head over the size limit: 431; one it cannot
     * parse: 400), or to a failure: plain text, the reason and nothing more.
     */
    private boolean error(
            org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response, Callback callback) {
        int status = response.getStatus();
        Object message = request.getAttribute(ErrorHandler.ERROR_MESSAGE);
        // A connection dropped here as too slow is already counted: Jetty may still answer its cut head with a 400
        // that no one reads (a full build counted it twice).
        boolean droppedHere =
                !request.getConnectionMetaData().getConnection().getEndPoint().isOpen();
        if ((status == 400 || status == 431) && !droppedHere) {
            refusals.refused(
                    Reason.MALFORMED, peerOf(request.getConnectionMetaData().getRemoteSocketAddress()));
        }
        String reason = status == 431
                ? "the request head is longer than " + limits.maxHeadBytes() + " bytes"
                : status == 400
                        ? badRequest(request, message)
                        : status < 500 ? (message == null ? "refused" : message.toString()) : "internal error";
        send(response, callback, Response.text(status, reason + "\n"), true);
        return true;
    }

    /**
     * The reason for a 400 of Jetty's. A '%' not followed by two hex digits fails Jetty's parse of the request line
     * itself (a NumberFormatException "!hex"), before any handler could say what is wrong: said here.
     */
    private static String badRequest(org.eclipse.jetty.server.Request request, Object message) {
        for (Throwable cause = (Throwable) request.getAttribute(ErrorHandler.ERROR_EXCEPTION);
                cause != null;
                cause = cause.getCause()) {
            if (cause instanceof NumberFormatException
                    && String.valueOf(cause.getMessage()).startsWith("!hex")) {
                return "malformed percent-encoding in the path: a '%' must be followed by two hex digits (send a"
                        + " '%' itself as %25)";
            }
        }
        return "bad request" + (message == null ? "" : ": " + message);
    }

    private static InetAddress peerOf(SocketAddress address) {
        return address instanceof InetSocketAddress inet ? inet.getAddress() : null;
    }

    private void headArrived(Connection connection) {
        Scheduler.Task deadline;
        synchronized (pending) {
            deadline = pending.remove(connection);
        }
        if (deadline != null) {
            deadline.cancel();
        }
    }

    /** Drops a connection that did not send its head in time, or is the oldest when room is needed. */
    private void tooSlow(Connection connection) {
        refusals.refused(Reason.TOO_SLOW, peerOf(connection.getEndPoint().getRemoteSocketAddress()));
        // Counted before the close, so that whoever sees the connection end sees it counted.
        dropped.incrementAndGet();
        // No answer: a client this slow is not waiting for one.
        connection.getEndPoint().close();
    }

    /** Gives each new connection its head deadline, and makes room when too many are still sending theirs. */
    private final class HeadDeadline implements Connection.Listener {
        @Override
        public void onOpened(Connection connection) {
            Connection oldest = null;
            synchronized (pending) {
                if (pending.size() >= limits.maxPending()) {
                    Iterator<Map.Entry<Connection, Scheduler.Task>> entries =
                            pending.entrySet().iterator();
                    Map.Entry<Connection, Scheduler.Task> entry = entries.next();
                    entries.remove();
                    entry.getValue().cancel();
                    oldest = entry.getKey();
                }
                pending.put(
                        connection,
                        connector
                                .getScheduler()
                                .schedule(
                                        () -> expired(connection),
                                        limits.headDeadline().toNanos(),
                                        TimeUnit.NANOSECONDS));
            }
            if (oldest != null) {
                tooSlow(oldest);
            }
        }

        @Override
        public void onClosed(Connection connection) {
            headArrived(connection);
        }

        private void expired(Connection connection) {
            boolean stillPending;
            synchronized (pending) {
                stillPending = pending.remove(connection) != null;
            }
            if (stillPending) {
                tooSlow(connection);
            }
        }
    }

    /** The body as the handler reads it; a failed read is the client's doing (it stalled, hung up, sent less). */
    private static final class ClientBody extends InputStream {
        private final InputStream in;
        /** Whether the handler asked for a byte of it (a read also answers an {@code Expect: 100-continue}). */
        private volatile boolean touched;

        ClientBody(InputStream in) {
            this.in = in;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            touched = true;
            try {
                return in.read(buffer, offset, length);
            } catch (IOException e) {
                throw new ClientGoneException(e);
            } catch (RuntimeException e) {
                // Jetty reports a body that ends early or times out as an unchecked failure in some paths.
                throw new ClientGoneException(new IOException(e.toString(), e));
            }
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
