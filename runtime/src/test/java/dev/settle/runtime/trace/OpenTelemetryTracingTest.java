package dev.settle.runtime.trace;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** What the SDK's autoconfiguration refuses is a refusal that names the setting and says what to do. */
class OpenTelemetryTracingTest {
    @Test
    void aProtocolWithNoSenderIsRefusedSayingWhichSettingsWork() {
        // A system property, as OTEL_EXPORTER_OTLP_PROTOCOL would be: the SDK reads both the same way.
        System.setProperty("otel.exporter.otlp.protocol", "grpc");
        try {
            assertThatThrownBy(OpenTelemetryTracing::autoconfigured)
                    .isInstanceOf(TracingRefusedException.class)
                    .hasMessageStartingWith("tracing: the OpenTelemetry SDK refused the OTEL_* settings: ")
                    .hasMessageContaining("OTEL_EXPORTER_OTLP_PROTOCOL to http/protobuf");
        } finally {
            System.clearProperty("otel.exporter.otlp.protocol");
        }
    }
}
