package dev.settle.runtime.http;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** One request: its head, read whole, and its body as a stream read on demand. */
public final class Request {
    private final String method;
    private final String target;
    private final Map<String, String> headers;
    private final InetAddress peer;
    private final Connection connection;
    private final Duration idle;
    private final long deadlineNanos;
    private final InputStream body;
    private boolean continued;

    Request(
            String method,
            String target,
            Map<String, String> headers,
            InetAddress peer,
            Connection connection,
            Duration idle,
            long deadlineNanos) {
        this.method = method;
        this.target = target;
        this.headers = headers;
        this.peer = peer;
        this.connection = connection;
        this.idle = idle;
        this.deadlineNanos = deadlineNanos;
        this.body = bodyStream();
    }

    /** A request whose server reads the body and answers {@code Expect: 100-continue} itself (Jetty). */
    Request(String method, String target, Map<String, String> headers, InetAddress peer, InputStream body) {
        this.method = method;
        this.target = target;
        this.headers = headers;
        this.peer = peer;
        this.connection = null;
        this.idle = null;
        this.deadlineNanos = 0;
        this.body = body;
    }

    /** {@code GET}, {@code PUT}, …, as sent. */
    public String method() {
        return method;
    }

    /** The path as sent, still percent-encoded, without the query. */
    public String rawPath() {
        int query = target.indexOf('?');
        return query < 0 ? target : target.substring(0, query);
    }

    /** The request target as sent, for log lines. */
    public String target() {
        return target;
    }

    /**
     * The address the connection comes from (a proxy's or a Service's, when behind one), or null when the socket no
     * longer knows it.
     */
    public InetAddress peer() {
        return peer;
    }

    /** The header's value (the last one, when sent more than once); names are case-insensitive. */
    public Optional<String> header(String name) {
        return Optional.ofNullable(headers.get(name.toLowerCase(Locale.ROOT)));
    }

    /**
     * The body (empty without {@code Content-Length} or {@code Transfer-Encoding: chunked}). A read waits at most the
     * server's idle timeout for the next byte. Asking for it answers a client's {@code Expect: 100-continue}: a
     * request refused on its head alone is answered without the client sending the body.
     */
    public InputStream body() throws IOException {
        if (!continued
                && connection != null
                && header("expect").filter("100-continue"::equalsIgnoreCase).isPresent()) {
            connection.write(
                    ByteBuffer.wrap("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII)),
                    deadlineNanos);
        }
        continued = true;
        return body;
    }

    /** Whether a body was announced and not read to its end (the server then reads some of it away). */
    boolean bodyLeft() {
        return body instanceof BodyInput input && !input.finished();
    }

    private InputStream bodyStream() {
        String encoding = headers.get("transfer-encoding");
        if (encoding != null) {
            return new ChunkedInput(connection, idle);
        }
        String length = headers.get("content-length");
        if (length == null) {
            return InputStream.nullInputStream();
        }
        return new FixedLengthInput(connection, Long.parseLong(length.strip()), idle);
    }

    /** A body stream that knows whether it has reached its end. */
    interface BodyInput {
        boolean finished();
    }
}
