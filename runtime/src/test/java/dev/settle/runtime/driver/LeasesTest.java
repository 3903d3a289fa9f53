package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.ManualTime;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Schema;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A call's lease (issue 44): given up at {@code handlerTimeout} from the call's start, unless extended; interrupted and
 * settled as a {@code timeout} failure, its permit back, its late outcome and outputs refused. The lease check is run
 * by hand ({@link RunningCalls#expireOverdue}) on a {@link ManualTime}; the handler runs on a thread of its own, as
 * it does in a driver.
 */
class LeasesTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Duration IGNORING_AFTER = Duration.ofSeconds(1);

    private final ManualTime time = new ManualTime();
    private final List<String> calls = new CopyOnWriteArrayList<>();
    private final List<Map<String, String>> letters = new CopyOnWriteArrayList<>();
    private final RecordingMetrics metrics = new RecordingMetrics();
    private final RunningCalls running = new RunningCalls(1, time);
    private final AtomicInteger permitsBack = new AtomicInteger();
    private final List<Optional<Settled>> settled = new CopyOnWriteArrayList<>();
    private final List<Thread> threads = new CopyOnWriteArrayList<>();
    /** What a {@link #blockingPort}'s call was interrupted with. */
    private final AtomicReference<Throwable> heard = new AtomicReference<>();

    private final ConsumerCalls<Message<?>> consumer = new ConsumerCalls<>() {
        @Override
        public CompletionStage<Void> acknowledge(Message<?> message) {
            calls.add("acknowledge");
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void negativeAcknowledge(Message<?> message) {
            calls.add("negativeAcknowledge");
        }
    };

    @AfterEach
    void endHandlers() throws InterruptedException {
        for (Thread thread : threads) {
            thread.interrupt();
            thread.join(5_000);
        }
    }

    @Test
    void aCallPastHandlerTimeoutIsInterruptedAndSettledAsATimeoutWithItsPermitBack() throws Exception {
        Processing processing = processing(spec().build(), blockingPort(null));
        AtomicReference<Throwable> inHandler = new AtomicReference<>();
        CountDownLatch returned = call(processing, UnitOfWorkTest.message(MessageId.earliest), inHandler);

        time.advance(TIMEOUT.minusMillis(1));
        assertThat(running.expireOverdue(processing::timedOut, IGNORING_AFTER)).isZero();
        assertThat(calls).isEmpty();
        assertThat(permitsBack).hasValue(0);

        time.advance(Duration.ofMillis(1));
        running.expireOverdue(processing::timedOut, IGNORING_AFTER);

        assertThat(returned.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(heard.get()).isInstanceOf(InterruptedException.class);
        assertThat(inHandler.get()).as("nothing escaped the call").isNull();
        assertThat(calls).containsExactly("negativeAcknowledge");
        assertThat(metrics.failures).containsEntry(Failure.Stage.TIMEOUT, 1);
        assertThat(permitsBack).hasValue(1);
        assertThat(settled).containsExactly(Optional.of(Settled.ERROR));
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }

    @Test
    void theLeaseClockStartsWhenTheCallStartsNotWhenTheMessageWasReceived() throws Exception {
        Processing processing = processing(spec().build(), blockingPort(null));
        long receivedLongAgo = time.nanoTime();
        // Held behind its key, or waiting for a permit, for longer than handlerTimeout before its call starts.
        time.advance(TIMEOUT.multipliedBy(3));
        call(processing, UnitOfWorkTest.message(MessageId.earliest), receivedLongAgo, new AtomicReference<>());

        time.advance(TIMEOUT.minusMillis(1));
        running.expireOverdue(processing::timedOut, IGNORING_AFTER);

        assertThat(calls).isEmpty();
    }

    @Test
    void anExtendedCallRunsPastHandlerTimeoutAndIsGivenUpAtItsNewDeadline() throws Exception {
        AtomicReference<UnitOfWork<Message<?>>> current = new AtomicReference<>();
        Processing processing = processing(spec().build(), blockingPort(current));
        call(processing, UnitOfWorkTest.message(MessageId.earliest), new AtomicReference<>());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> current.get() != null);

        time.advance(Duration.ofSeconds(8));
        current.get().lease().extend(Duration.ofSeconds(30));
        time.advance(Duration.ofSeconds(29));
        running.expireOverdue(processing::timedOut, IGNORING_AFTER);
        assertThat(calls).as("37 s into a call extended at 8 s by 30 s").isEmpty();

        time.advance(Duration.ofSeconds(1));
        running.expireOverdue(processing::timedOut, IGNORING_AFTER);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !calls.isEmpty());
        assertThat(calls).containsExactly("negativeAcknowledge");
    }

    @Test
    void anExtendNeverShortensTheDeadline() throws Exception {
        AtomicReference<UnitOfWork<Message<?>>> current = new AtomicReference<>();
        Processing processing = processing(spec().build(), blockingPort(current));
        call(processing, UnitOfWorkTest.message(MessageId.earliest), new AtomicReference<>());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> current.get() != null);

        current.get().lease().extend(Duration.ofSeconds(1));
        time.advance(Duration.ofSeconds(5));
        running.expireOverdue(processing::timedOut, IGNORING_AFTER);

        assertThat(calls).isEmpty();
    }

    @Test
    void whatATimedOutCallPublishesIsRefusedAndItsLateOutcomeIgnored() throws Exception {
        AtomicReference<Throwable> refused = new AtomicReference<>();
        HandlerPort lateAck = new TestPort() {
            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                try {
                    new CountDownLatch(1).await();
                } catch (InterruptedException heard) {
                    // Goes on as a handler that catches the interrupt would: publishes, then acknowledges.
                    try {
                        work.outputs(null);
                    } catch (IllegalStateException e) {
                        refused.set(e);
                    }
                }
                return CompletableFuture.completedFuture(Outcome.ack());
            }
        };
        Processing processing = processing(spec().build(), lateAck);
        CountDownLatch returned = call(processing, UnitOfWorkTest.message(MessageId.earliest), new AtomicReference<>());

        time.advance(TIMEOUT);
        running.expireOverdue(processing::timedOut, IGNORING_AFTER);

        assertThat(returned.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(refused.get())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ran past its deadline")
                .hasMessageContaining("what it publishes now is refused");
        assertThat(calls).as("the late ack is not made").containsExactly("negativeAcknowledge");
        assertThat(settled).hasSize(1);
    }

    @Test
    void aTimeoutOnTheLastAttemptIsDeadLetteredWithStageTimeout() throws Exception {
        Processing processing = processing(
                spec().deadLetter(2, "persistent://public/default/orders-dlq").build(), blockingPort(null));
        CountDownLatch returned = call(processing, lastAttempt(), new AtomicReference<>());

        time.advance(TIMEOUT);
        running.expireOverdue(processing::timedOut, IGNORING_AFTER);

        assertThat(returned.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(letters)
                .singleElement()
                .satisfies(properties -> assertThat(properties)
                        .containsEntry(DeadLetterProperties.STAGE, "timeout")
                        .containsEntry(DeadLetterProperties.EXCEPTION_CLASS, HandlerTimeoutException.class.getName()));
        assertThat(calls).containsExactly("acknowledge");
    }

    @Test
    void aThreadThatIgnoresTheInterruptIsCountedOnceItIsASecondPastItsDeadline() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        HandlerPort deaf = new TestPort() {
            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                while (release.getCount() > 0) {
                    try {
                        release.await();
                    } catch (InterruptedException ignored) {
                        // Ignores it, as a handler stuck in a library that swallows interrupts does.
                    }
                }
                return CompletableFuture.completedFuture(Outcome.ack());
            }
        };
        Processing processing = processing(spec().build(), deaf);
        CountDownLatch returned = call(processing, UnitOfWorkTest.message(MessageId.earliest), new AtomicReference<>());

        time.advance(TIMEOUT);
        assertThat(running.expireOverdue(processing::timedOut, IGNORING_AFTER)).isZero();
        assertThat(permitsBack)
                .as("the permit goes back though the thread is stuck")
                .hasValue(1);
        time.advance(IGNORING_AFTER);
        assertThat(running.expireOverdue(processing::timedOut, IGNORING_AFTER)).isEqualTo(1);

        release.countDown();
        assertThat(returned.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(running.expireOverdue(processing::timedOut, IGNORING_AFTER)).isZero();
        assertThat(calls).containsExactly("negativeAcknowledge");
    }

    @Test
    void aPendingOutcomePastItsDeadlineIsSettledAsATimeoutAndItsLateCompletionIgnored() {
        CompletableFuture<Outcome> pending = new CompletableFuture<>();
        Processing processing = processing(spec().build(), new TestPort() {
            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                return pending;
            }
        });
        processing.process(
                UnitOfWorkTest.message(MessageId.earliest),
                time.nanoTime(),
                running.slot(0),
                permitsBack::incrementAndGet,
                settled::add);

        time.advance(TIMEOUT);
        running.expireOverdue(processing::timedOut, IGNORING_AFTER);
        pending.complete(Outcome.ack());

        assertThat(calls).containsExactly("negativeAcknowledge");
        assertThat(metrics.failures).containsEntry(Failure.Stage.TIMEOUT, 1);
        assertThat(running.longest()).isEqualTo(Duration.ZERO);
    }

    @Test
    void atExactlyOnceAnExtendPastHandlerTimeoutIsRefusedNamingBothValues() throws Exception {
        AtomicReference<UnitOfWork<Message<?>>> current = new AtomicReference<>();
        Processing processing =
                processing(spec().guarantee(Guarantee.EXACTLY_ONCE).build(), blockingPort(current));
        call(processing, UnitOfWorkTest.message(MessageId.earliest), new AtomicReference<>());
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> current.get() != null);
        time.advance(Duration.ofSeconds(4));

        // Within handlerTimeout: taken.
        current.get().lease().extend(Duration.ofSeconds(6));
        assertThatThrownBy(() -> current.get().lease().extend(Duration.ofSeconds(7)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("extend(PT7S) refused")
                .hasMessageContaining("exactly-once")
                .hasMessageContaining("handlerTimeout 10s")
                .hasMessageContaining("raise handlerTimeout");
    }

    @Test
    void anExtendAfterTheCallIsOverOrOfNoTimeIsRefused() {
        AtomicReference<UnitOfWork<Message<?>>> kept = new AtomicReference<>();
        Processing processing = processing(spec().build(), new TestPort() {
            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                kept.set(work);
                assertThatThrownBy(() -> work.lease().extend(Duration.ZERO))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("pass a positive duration");
                return CompletableFuture.completedFuture(Outcome.ack());
            }
        });
        processing.process(
                UnitOfWorkTest.message(MessageId.earliest),
                time.nanoTime(),
                running.slot(0),
                permitsBack::incrementAndGet,
                settled::add);

        assertThatThrownBy(() -> kept.get().lease().extend(Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is over");
        assertThat(calls).containsExactly("acknowledge");
    }

    private SubscriptionSpec.Builder spec() {
        return SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .type(SubscriptionKind.SHARED)
                .failureBackoff(Optional.empty())
                .handlerTimeout(TIMEOUT);
    }

    private Processing processing(SubscriptionSpec spec, HandlerPort port) {
        return new Processing(
                spec,
                port,
                new SubscriptionServices(
                        consumer,
                        (work, properties) -> {
                            letters.add(properties);
                            return CompletableFuture.completedFuture(null);
                        },
                        time,
                        metrics,
                        time::currentTimeMillis,
                        error -> {}),
                new Processing.Caller(new PendingOutputs(1000, time), false, Optional.empty()),
                SettlementStrategy.atLeastOnce(),
                Pipeline.Journal.NONE);
    }

    /** Calls {@code processing} on a thread of its own, as a driver's slot 0; counts down once the call returned. */
    private CountDownLatch call(Processing processing, Message<?> message, AtomicReference<Throwable> thrown) {
        return call(processing, message, time.nanoTime(), thrown);
    }

    private CountDownLatch call(
            Processing processing, Message<?> message, long receivedNanos, AtomicReference<Throwable> thrown) {
        CountDownLatch returned = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        Thread thread = new Thread(() -> {
            started.countDown();
            processing.process(message, receivedNanos, running.slot(0), permitsBack::incrementAndGet, settled::add);
            returned.countDown();
        });
        thread.setUncaughtExceptionHandler((t, e) -> thrown.set(e));
        threads.add(thread);
        thread.start();
        // In the handler once its thread waits there (its lease is in its slot by then): waited for, not guessed.
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> started.getCount() == 0
                        && (thread.getState() == Thread.State.WAITING || returned.getCount() == 0));
        return returned;
    }

    /**
     * A port whose call waits until interrupted, recording the interrupt in {@link #heard} and throwing it; hands its
     * unit of work to {@code current}.
     */
    private HandlerPort blockingPort(AtomicReference<UnitOfWork<Message<?>>> current) {
        return new TestPort() {
            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) throws Exception {
                if (current != null) {
                    current.set(work);
                }
                try {
                    new CountDownLatch(1).await();
                } catch (InterruptedException e) {
                    heard.set(e);
                    throw e;
                }
                return CompletableFuture.completedFuture(Outcome.ack());
            }
        };
    }

    private abstract static class TestPort implements HandlerPort {
        @Override
        public Schema<?> schema() {
            return Schema.BYTES;
        }

        @Override
        public String toString() {
            return "com.acme.Orders";
        }
    }

    private static Message<?> lastAttempt() {
        return UnitOfWorkTest.message(MessageId.earliest, 1);
    }
}
