package dev.settle.runtime.function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import dev.settle.testbroker.PulsarFixture;
import dev.settle.testbroker.SettleProcess;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Producer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code settle run} with {@code tracing: true} exports its spans over OTLP/HTTP as the standard {@code OTEL_*}
 * variables say: a receiver in this test (the JDK's HTTP server, the protobuf read by hand) gets the handling span,
 * a child of the producer's {@code traceparent}, and the output's send span below it, whose context the output
 * carries (docs/observability.md, "Traces").
 */
class TracingOtlpIT {
    private static final Duration WITHIN = Duration.ofSeconds(60);

    @TempDir
    Path folder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    /** One span as OTLP sends it: ids in hex. */
    record ExportedSpan(String traceId, String spanId, String parentSpanId, String name) {}

    private final Queue<ExportedSpan> received = new ConcurrentLinkedQueue<>();

    @Test
    void settleRunExportsTheHandlingAndOutputSpansOverOtlpHttpInTheProducersTrace() throws Exception {
        FunctionJars.identity(folder);
        String in = FunctionsIT.topic("otlp-in");
        String out = in + "-out";
        int port = SettleProcess.freePort();
        Path manifest = folder.resolve("traced.yaml");
        Files.writeString(
                manifest, PulsarFixture.manifestText(pulsar.endpoints().serviceUrl(), port, """
                tracing: true
                subscriptions:
                  - name: identity
                    topics: [%s]
                    function: com.example.identity.Identity
                    jar: %s
                    output: %s
                """.formatted(
                                in, folder.resolve("identity.jar"), out)));
        HttpServer receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        receiver.createContext("/v1/traces", exchange -> {
            try (InputStream body = exchange.getRequestBody()) {
                received.addAll(spans(body.readAllBytes()));
            }
            exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        receiver.start();
        String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        String producerSpan = "00f067aa0ba902b7";
        SettleProcess settle = SettleProcess.run(
                manifest,
                "settle run traced",
                List.of(
                        "env",
                        "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:"
                                + receiver.getAddress().getPort(),
                        "OTEL_BSP_SCHEDULE_DELAY=200"));
        try (Consumer<String> downstream = FunctionTopics.downstream(pulsar.client(), out);
                Producer<String> producer = FunctionTopics.unbatched(pulsar.client(), in)) {
            await().atMost(WITHIN).until(() -> SettleProcess.status(port, "/readyz") == 200);
            producer.newMessage()
                    .value("hello")
                    .property("traceparent", "00-" + traceId + "-" + producerSpan + "-01")
                    .send();
            Message<String> output = downstream.receive(30, TimeUnit.SECONDS);
            assertThat(output).as("the output within 30 s").isNotNull();

            await().atMost(WITHIN).until(() -> named("send " + out).size() == 1);
            await().atMost(WITHIN).until(() -> named("process identity").size() == 1);
            ExportedSpan handling = named("process identity").get(0);
            ExportedSpan send = named("send " + out).get(0);
            assertThat(handling.traceId()).isEqualTo(traceId);
            assertThat(handling.parentSpanId()).isEqualTo(producerSpan);
            assertThat(send.traceId()).isEqualTo(traceId);
            assertThat(send.parentSpanId()).isEqualTo(handling.spanId());
            assertThat(output.getProperty("traceparent")).isEqualTo("00-" + traceId + "-" + send.spanId() + "-01");
        } finally {
            settle.sigterm();
            assertThat(settle.exitsWithin(30)).isTrue();
            settle.close();
            receiver.stop(0);
        }
    }

    private List<ExportedSpan> named(String name) {
        return received.stream().filter(span -> span.name().equals(name)).toList();
    }

    /**
     * The spans of an {@code ExportTraceServiceRequest}: resource_spans (1) → scope_spans (2) → spans (2), each
     * with trace_id (1), span_id (2), parent_span_id (4) and name (5). Read by hand: the protobuf classes are not
     * worth a test dependency for four fields.
     */
    static List<ExportedSpan> spans(byte[] request) {
        List<ExportedSpan> spans = new ArrayList<>();
        for (byte[] resource : fields(request, 1)) {
            for (byte[] scope : fields(resource, 2)) {
                for (byte[] span : fields(scope, 2)) {
                    spans.add(new ExportedSpan(
                            hex(fields(span, 1)),
                            hex(fields(span, 2)),
                            hex(fields(span, 4)),
                            fields(span, 5).isEmpty()
                                    ? ""
                                    : new String(fields(span, 5).get(0), StandardCharsets.UTF_8)));
                }
            }
        }
        return spans;
    }

    private static String hex(List<byte[]> values) {
        return values.isEmpty() ? "" : HexFormat.of().formatHex(values.get(0));
    }

    /** The length-delimited values of field {@code number} in {@code message}, skipping every other field. */
    private static List<byte[]> fields(byte[] message, int number) {
        List<byte[]> values = new ArrayList<>();
        int[] at = {0};
        while (at[0] < message.length) {
            long key = varint(message, at);
            int wireType = (int) (key & 7);
            switch (wireType) {
                case 0 -> varint(message, at);
                case 1 -> at[0] += 8;
                case 5 -> at[0] += 4;
                case 2 -> {
                    int length = (int) varint(message, at);
                    if (key >>> 3 == number) {
                        byte[] value = new byte[length];
                        System.arraycopy(message, at[0], value, 0, length);
                        values.add(value);
                    }
                    at[0] += length;
                }
                default -> throw new IllegalStateException("wire type " + wireType + " in an OTLP request");
            }
        }
        return values;
    }

    private static long varint(byte[] message, int[] at) {
        long value = 0;
        for (int shift = 0; ; shift += 7) {
            byte b = message[at[0]++];
            value |= (long) (b & 0x7f) << shift;
            if (b >= 0) {
                return value;
            }
        }
    }
}
