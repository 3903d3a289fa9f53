package dev.settle.runtime.driver;

import dev.settle.runtime.time.Time;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.pulsar.client.api.Message;

/**
 * What one subscription's message path calls out to, for the subscription's whole life: the real consumer or the
 * test kit's simulated one, the clocks, the metrics.
 *
 * @param consumer receives the acknowledgements and negative acknowledgements
 * @param deadLetters writes the dead letters Settle has a cause for; null leaves them all to the client's policy
 * @param time the clock and timer every wait runs on (a manual one in tests and in the kit)
 * @param metrics what the subscription reports to
 * @param wallClockMillis the wall clock the delivery lag is measured on, against each message's publish time
 * @param fatal told of a {@link VirtualMachineError} a call hit (a function's {@code context.fatal} too), on the
 *     thread of the call, before it is thrown there
 * @param onCap what becomes of a letter Settle writes: the dead-letter topic, or the held topic ({@code onCap: hold})
 * @param delayCopies writes the copies of waits kept on the delay topic ({@code durableDelays: true}); null keeps every
 *     wait in the process
 */
public record SubscriptionServices(
        ConsumerCalls<Message<?>> consumer,
        DeadLetterWriter<Message<?>> deadLetters,
        Time time,
        DriverMetrics metrics,
        LongSupplier wallClockMillis,
        Consumer<VirtualMachineError> fatal,
        OnCap<Message<?>> onCap,
        DelayWriter<Message<?>> delayCopies) {
    /** Every wait in the process. */
    public SubscriptionServices(
            ConsumerCalls<Message<?>> consumer,
            DeadLetterWriter<Message<?>> deadLetters,
            Time time,
            DriverMetrics metrics,
            LongSupplier wallClockMillis,
            Consumer<VirtualMachineError> fatal,
            OnCap<Message<?>> onCap) {
        this(consumer, deadLetters, time, metrics, wallClockMillis, fatal, onCap, null);
    }

    /** Every letter to the dead-letter topic ({@code onCap: deadLetter}). */
    public SubscriptionServices(
            ConsumerCalls<Message<?>> consumer,
            DeadLetterWriter<Message<?>> deadLetters,
            Time time,
            DriverMetrics metrics,
            LongSupplier wallClockMillis,
            Consumer<VirtualMachineError> fatal) {
        this(consumer, deadLetters, time, metrics, wallClockMillis, fatal, OnCap.deadLetter());
    }

    public SubscriptionServices {
        Objects.requireNonNull(onCap, "onCap");
        Objects.requireNonNull(consumer, "consumer");
        Objects.requireNonNull(time, "time");
        Objects.requireNonNull(metrics, "metrics");
        Objects.requireNonNull(wallClockMillis, "wallClockMillis");
        Objects.requireNonNull(fatal, "fatal");
    }
}
