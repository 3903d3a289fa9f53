package dev.settle.runtime.http;

import java.io.InputStream;
import java.net.InetAddress;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** One request: its head, read whole, and its body as a stream read on demand. */
public final class Request {
    private final String method;
    private final String target;
    private final Map<String, String> headers;
    private final InetAddress peer;
    private final InputStream body;

    /**
     * @param headers by lower-case name, the last value of each
     * @param body read as the handler asks; Jetty answers a client's {@code Expect: 100-continue} at the first read
     */
    Request(String method, String target, Map<String, String> headers, InetAddress peer, InputStream body) {
        this.method = method;
        this.target = target;
        this.headers = headers;
        this.peer = peer;
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
     * server's idle timeout for the next byte, and fails with the client's fault (logged in one line) past it. Asking
     * for it and reading answers a client's {@code Expect: 100-continue}: a request refused on its head alone is
     * answered without the client sending the body.
     */
    public InputStream body() {
        return body;
    }
}
