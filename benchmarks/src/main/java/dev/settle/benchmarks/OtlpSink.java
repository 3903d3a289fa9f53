package dev.settle.benchmarks;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where the tracing rows' spans go: an OTLP/HTTP endpoint on a free local port that takes every export, answers 200
 * with an empty response (an empty {@code ExportTraceServiceResponse}) and only counts what came, so the traced run
 * pays for making and sending its spans and for nothing downstream.
 */
final class OtlpSink implements AutoCloseable {
    private final HttpServer server;
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();

    private OtlpSink(HttpServer server) {
        this.server = server;
    }

    static OtlpSink start() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        OtlpSink sink = new OtlpSink(server);
        server.createContext("/v1/traces", exchange -> {
            try (InputStream body = exchange.getRequestBody()) {
                sink.bytes.addAndGet(body.transferTo(java.io.OutputStream.nullOutputStream()));
            }
            sink.requests.incrementAndGet();
            exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.start();
        return sink;
    }

    /** The endpoint, as {@code otel.exporter.otlp.endpoint} takes it (the exporter adds {@code /v1/traces}). */
    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    long requests() {
        return requests.get();
    }

    long bytes() {
        return bytes.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
