package dev.settle.benchmarks.handlers;

import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.function.LongConsumer;

/**
 * The key-hold benchmark's handler, on a {@code Key_Shared} subscription whose message {@code i} has key
 * {@code i % keys} and a payload of {@link #payload}: acks every message, except that message {@code failIndex}
 * (of key {@code failingKey}) gets {@code retryAfter(delayMillis)} on its first {@code failures} attempts (0: the run
 * without the failure). Each measured message's publish → handle time (nanoseconds) goes to the {@link Sink}: the
 * other keys' to the default channel, the failing key's messages after {@code failIndex} (held behind its retry) to
 * the {@code held} channel; the first {@code warmUp} messages and the failing key's earlier ones to neither.
 */
public final class KeyHoldHandler implements Handler<byte[]> {
    private int warmUp;
    private int keys;
    private int failingKey;
    private int failIndex;
    private int failures;
    private Duration delay;
    private LongConsumer others;
    private LongConsumer held;

    /**
     * 100 bytes: {@code sentAt} (the publisher's {@code System.nanoTime()}: Linux's monotonic clock, the same in
     * every process of the machine) and the message's index.
     */
    public static byte[] payload(long sentAt, int index) {
        return ByteBuffer.allocate(Payload.SIZE).putLong(sentAt).putInt(index).array();
    }

    @Override
    public void open(HandlerContext context) {
        warmUp = Integer.parseInt(context.config().get("warmUp"));
        keys = Integer.parseInt(context.config().get("keys"));
        failingKey = Integer.parseInt(context.config().get("failingKey"));
        failIndex = Integer.parseInt(context.config().get("failIndex"));
        failures = Integer.parseInt(context.config().get("failures"));
        delay = Duration.ofMillis(Long.parseLong(context.config().get("delayMillis")));
        others = Sink.find();
        held = Sink.find("held");
    }

    @Override
    public Outcome handle(Delivery<byte[]> delivery) {
        long now = System.nanoTime();
        ByteBuffer payload = ByteBuffer.wrap(delivery.value());
        long sentAt = payload.getLong();
        int index = payload.getInt();
        if (index == failIndex && delivery.attempt() <= failures) {
            return Outcome.retryAfter(delay);
        }
        if (index >= warmUp) {
            if (index % keys != failingKey) {
                others.accept(now - sentAt);
            } else if (index > failIndex) {
                held.accept(now - sentAt);
            }
        }
        return Outcome.ack();
    }
}
