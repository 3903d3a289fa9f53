package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.driver.HandlerPort;
import dev.settle.sdk.Outcome;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

class SwappableHandlerPortTest {

    /** A generation whose calls record themselves and, while {@code gate} is closed, wait at it. */
    private static class FakePort implements HandlerPort {
        final List<Message<?>> handled = new CopyOnWriteArrayList<>();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch gate;
        final Outcome outcome;

        FakePort(Outcome outcome, boolean blocking) {
            this.outcome = outcome;
            this.gate = new CountDownLatch(blocking ? 1 : 0);
        }

        @Override
        public Schema<?> schema() {
            return Schema.STRING;
        }

        @Override
        public CompletionStage<Outcome> handle(Message<?> message) throws Exception {
            handled.add(message);
            entered.countDown();
            gate.await();
            return CompletableFuture.completedFuture(outcome);
        }
    }

    private static Generation generation(int number, HandlerPort port) {
        return new Generation(
                new GenerationRecord(number, "sha" + number, "Handler", GenerationRecord.Source.UPLOAD, Instant.now()),
                null,
                port,
                null);
    }

    /** A message with an identity and nothing else: the fake ports never look inside. */
    private static Message<?> message() {
        return (Message<?>) Proxy.newProxyInstance(
                Message.class.getClassLoader(),
                new Class<?>[] {Message.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "toString" -> "message@" + System.identityHashCode(proxy);
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private static CompletableFuture<Outcome> call(HandlerPort port, Message<?> message) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return port.handle(message).toCompletableFuture().join();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void aCallInFlightFinishesOnTheOldGenerationAndACallArrivingDuringTheSwapGoesToTheNew() throws Exception {
        FakePort old = new FakePort(Outcome.ack(), true);
        FakePort next = new FakePort(Outcome.drop(), false);
        SwappableHandlerPort port = new SwappableHandlerPort(generation(1, old));
        Message<?> first = message();
        Message<?> second = message();

        CompletableFuture<Outcome> inFlight = call(port, first);
        assertThat(old.entered.await(5, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<SwappableHandlerPort.Swap> swap =
                CompletableFuture.supplyAsync(() -> port.swap(generation(2, next), Duration.ofSeconds(10)));
        // The swap waits for the call in flight; a call that arrives meanwhile waits for the swap.
        Thread.sleep(200);
        CompletableFuture<Outcome> arriving = call(port, second);
        Thread.sleep(200);
        assertThat(swap).isNotDone();
        assertThat(arriving).isNotDone();
        assertThat(next.handled).isEmpty();

        old.gate.countDown();

        assertThat(inFlight.get(5, TimeUnit.SECONDS)).isEqualTo(Outcome.ack());
        SwappableHandlerPort.Swap done = swap.get(5, TimeUnit.SECONDS);
        assertThat(done.drained()).isTrue();
        assertThat(done.retired().record.number()).isEqualTo(1);
        // At least the second sleep: the swap began (asynchronously) within the first one; under load not at once.
        assertThat(done.pauseNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
        assertThat(arriving.get(5, TimeUnit.SECONDS)).isEqualTo(Outcome.drop());
        assertThat(old.handled).containsExactly(first);
        assertThat(next.handled).containsExactly(second);
        assertThat(port.current().record.number()).isEqualTo(2);
    }

    @Test
    void aSwapWaitsNoLongerThanTheGraceAndTheOldCallsAreStillCounted() throws Exception {
        FakePort old = new FakePort(Outcome.ack(), true);
        FakePort next = new FakePort(Outcome.ack(), false);
        Generation first = generation(1, old);
        SwappableHandlerPort port = new SwappableHandlerPort(first);
        CompletableFuture<Outcome> stuck = call(port, message());
        assertThat(old.entered.await(5, TimeUnit.SECONDS)).isTrue();

        long started = System.nanoTime();
        SwappableHandlerPort.Swap swap = port.swap(generation(2, next), Duration.ofMillis(300));
        long took = System.nanoTime() - started;

        assertThat(swap.drained()).isFalse();
        assertThat(took).isBetween(TimeUnit.MILLISECONDS.toNanos(290), TimeUnit.SECONDS.toNanos(5));
        assertThat(port.handle(message()).toCompletableFuture().join()).isEqualTo(Outcome.ack());
        assertThat(next.handled).hasSize(1);
        assertThat(port.awaitIdle(first, Duration.ofMillis(100))).isFalse();
        old.gate.countDown();
        assertThat(stuck.get(5, TimeUnit.SECONDS)).isEqualTo(Outcome.ack());
        assertThat(port.awaitIdle(first, Duration.ofSeconds(5))).isTrue();
    }

    @Test
    void anOutcomeStillPendingKeepsItsGenerationInFlightUntilItCompletes() throws Exception {
        CompletableFuture<Outcome> publishing = new CompletableFuture<>();
        HandlerPort pending = new FakePort(Outcome.ack(), false) {
            @Override
            public CompletionStage<Outcome> handle(Message<?> message) {
                handled.add(message);
                return publishing;
            }
        };
        Generation first = generation(1, pending);
        SwappableHandlerPort port = new SwappableHandlerPort(first);
        CompletableFuture<Outcome> settled = port.handle(message()).toCompletableFuture();

        SwappableHandlerPort.Swap swap =
                port.swap(generation(2, new FakePort(Outcome.ack(), false)), Duration.ofMillis(200));
        assertThat(swap.drained()).isFalse();
        assertThat(port.awaitIdle(first, Duration.ofMillis(50))).isFalse();

        publishing.complete(Outcome.ack());
        assertThat(settled.get(5, TimeUnit.SECONDS)).isEqualTo(Outcome.ack());
        assertThat(port.awaitIdle(first, Duration.ofSeconds(5))).isTrue();
    }

    @Test
    void aSwapWithNothingInFlightPausesNobody() {
        SwappableHandlerPort port = new SwappableHandlerPort(generation(1, new FakePort(Outcome.ack(), false)));
        SwappableHandlerPort.Swap swap =
                port.swap(generation(2, new FakePort(Outcome.ack(), false)), Duration.ofSeconds(10));
        assertThat(swap.drained()).isTrue();
        assertThat(swap.pauseNanos()).isLessThan(TimeUnit.MILLISECONDS.toNanos(100));
    }

    @Test
    void theConsumersSchemaStaysTheFirstGenerationsAcrossSwaps() {
        HandlerPort bytes = new FakePort(Outcome.ack(), false) {
            @Override
            public Schema<?> schema() {
                return Schema.BYTES;
            }
        };
        SwappableHandlerPort port = new SwappableHandlerPort(generation(1, bytes));
        port.swap(generation(2, new FakePort(Outcome.ack(), false)), Duration.ofSeconds(1));
        assertThat(port.schema()).isSameAs(Schema.BYTES);
    }
}
