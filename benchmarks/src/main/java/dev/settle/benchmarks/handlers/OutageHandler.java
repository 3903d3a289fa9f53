package dev.settle.benchmarks.handlers;

import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import java.net.ConnectException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;

/**
 * The breaker benchmark's handler: each call is a call of {@code callMillis} to a {@link Dependency}; while the
 * dependency is down it throws a {@link ConnectException} (a dependency's cause: the outage circuit breaker counts it),
 * otherwise it acks and hands the message's index to the {@link Sink}. Message {@code poisonIndex} is a poison message:
 * it throws an {@link IllegalStateException} (a code bug, which never opens the breaker) on every call, and hands its
 * attempt to the {@code poison} channel.
 */
public final class OutageHandler implements Handler<byte[]> {
    private int poisonIndex;
    private long callMillis;
    private AtomicBoolean up;
    private LongConsumer handled;
    private LongConsumer poison;

    @Override
    public void open(HandlerContext context) {
        poisonIndex = Integer.parseInt(context.config().get("poisonIndex"));
        callMillis = Long.parseLong(context.config().get("callMillis"));
        up = Dependency.find();
        handled = Sink.find();
        poison = Sink.find("poison");
    }

    @Override
    public Outcome handle(Delivery<byte[]> delivery) throws Exception {
        int index = Payload.index(delivery.value());
        if (index == poisonIndex) {
            poison.accept(delivery.attempt());
            throw new IllegalStateException("poison message " + index + ": the benchmark's code bug");
        }
        if (!up.get()) {
            throw new ConnectException("the benchmark's dependency is down");
        }
        // The dependency's answer takes this long; a deliberate pause, not a wait for a condition.
        Thread.sleep(callMillis);
        handled.accept(index);
        return Outcome.ack();
    }
}
