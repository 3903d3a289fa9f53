package dev.settle.runtime.trace;

/**
 * The OpenTelemetry SDK refused the {@code OTEL_*} settings of a manifest with {@code tracing: true}: a configuration
 * problem, like a manifest's, so {@code settle run} refuses to start (exit 2) and says which.
 */
public final class TracingRefusedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TracingRefusedException(String message, Throwable cause) {
        super(message, cause);
    }
}
