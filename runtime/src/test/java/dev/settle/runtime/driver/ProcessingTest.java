package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.manifest.CommitBatch;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.ManualTime;
import dev.settle.sdk.Outcome;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.transaction.Transaction;
import org.apache.pulsar.client.api.transaction.TxnID;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** One message's rules around the port: what a swap between a call and its settlement changes. */
class ProcessingTest {
    private final Logger handlerLog = (Logger) LoggerFactory.getLogger("dev.settle.runtime.handler");
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private final ManualTime time = new ManualTime();
    private final List<String> calls = new CopyOnWriteArrayList<>();
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

    @BeforeEach
    void listen() {
        logged.list = new CopyOnWriteArrayList<>();
        logged.start();
        handlerLog.addAppender(logged);
    }

    @AfterEach
    void stopListening() {
        handlerLog.detachAppender(logged);
    }

    @Test
    void aFailureSettledAfterASwapNamesTheGenerationThatRanTheCallNotTheCurrentOne() {
        CompletableFuture<Outcome> pending = new CompletableFuture<>();
        Processing processing = new Processing(
                SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                        .type(SubscriptionKind.SHARED)
                        .failureBackoff(Optional.empty())
                        .build(),
                port("com.acme.Orders (generation 1)", pending),
                new SubscriptionServices(
                        consumer, null, time, new RecordingMetrics(), time::currentTimeMillis, error -> {}),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.atLeastOnce(),
                Pipeline.Journal.NONE);
        processing.process(
                UnitOfWorkTest.message(MessageId.earliest),
                time.nanoTime(),
                new Processing.Watch() {},
                () -> {},
                how -> {});

        processing.switchTo(port("com.acme.Orders (generation 2)", new CompletableFuture<>()));
        pending.completeExceptionally(new IllegalStateException("boom"));

        assertThat(calls).containsExactly("negativeAcknowledge");
        assertThat(logged.list)
                .singleElement()
                .satisfies(event -> assertThat(event.getFormattedMessage())
                        .contains("handler com.acme.Orders (generation 1) on message")
                        .doesNotContain("generation 2"));
    }

    @Test
    void theJournalIsToldOnceOfEachSettlementWithHowWhyAndTheGenerationThatRanTheCall() {
        List<String> journaled = new CopyOnWriteArrayList<>();
        CompletableFuture<Outcome> pending = new CompletableFuture<>();
        Processing processing = new Processing(
                SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                        .type(SubscriptionKind.SHARED)
                        .failureBackoff(Optional.empty())
                        .build(),
                port("com.acme.Orders (generation 1)", pending),
                new SubscriptionServices(
                        consumer, null, time, new RecordingMetrics(), time::currentTimeMillis, error -> {}),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.atLeastOnce(),
                SettlementJournal.of(
                        (work, how, code, handlingNanos, committed) -> journaled.add(how.label() + " attempt "
                                + work.attempt() + " "
                                + work.failure().map(f -> f.stage().label()).orElse("-") + " by "
                                + code + " committed " + committed)));
        processing.process(
                UnitOfWorkTest.message(MessageId.earliest, 1),
                time.nanoTime(),
                new Processing.Watch() {},
                () -> {},
                how -> {});

        processing.switchTo(port("com.acme.Orders (generation 2)", new CompletableFuture<>()));
        pending.completeExceptionally(new IllegalStateException("boom"));

        assertThat(journaled)
                .containsExactly("error attempt 2 handler by com.acme.Orders (generation 1) committed false");
    }

    @Test
    void withPerHandlingRecordsTheJournalIsToldOfEachCallAsItBeginsByTheCodeThatRunsIt() {
        List<String> journaled = new CopyOnWriteArrayList<>();
        CompletableFuture<Outcome> pending = new CompletableFuture<>();
        Journal perHandling = new Journal() {
            @Override
            public void settled(
                    UnitOfWork<Message<?>> work, Settled how, String code, long handlingNanos, boolean committed) {
                journaled.add(how.label() + " attempt " + work.attempt() + " by " + code);
            }

            @Override
            public boolean perHandling() {
                return true;
            }

            @Override
            public void handling(UnitOfWork<Message<?>> work, String code) {
                journaled.add("handling attempt " + work.attempt() + " by " + code);
            }
        };
        Processing processing = new Processing(
                SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                        .type(SubscriptionKind.SHARED)
                        .failureBackoff(Optional.empty())
                        .build(),
                port("com.acme.Orders (generation 1)", pending),
                new SubscriptionServices(
                        consumer, null, time, new RecordingMetrics(), time::currentTimeMillis, error -> {}),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.atLeastOnce(),
                SettlementJournal.of(perHandling));
        processing.process(
                UnitOfWorkTest.message(MessageId.earliest, 1),
                time.nanoTime(),
                new Processing.Watch() {},
                () -> {},
                how -> {});
        assertThat(journaled).containsExactly("handling attempt 2 by com.acme.Orders (generation 1)");

        pending.complete(Outcome.ack());

        assertThat(journaled)
                .containsExactly(
                        "handling attempt 2 by com.acme.Orders (generation 1)",
                        "ack attempt 2 by com.acme.Orders (generation 1)");
    }

    @Test
    void byDefaultTheJournalIsToldNothingAsACallBegins() {
        List<String> journaled = new CopyOnWriteArrayList<>();
        Journal oneRecordPerSettlement = new Journal() {
            @Override
            public void settled(
                    UnitOfWork<Message<?>> work, Settled how, String code, long handlingNanos, boolean committed) {
                journaled.add(how.label());
            }

            @Override
            public void handling(UnitOfWork<Message<?>> work, String code) {
                journaled.add("handling");
            }
        };
        Processing processing = new Processing(
                SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                        .type(SubscriptionKind.SHARED)
                        .build(),
                port("com.acme.Orders", CompletableFuture.completedFuture(Outcome.ack())),
                new SubscriptionServices(
                        consumer, null, time, new RecordingMetrics(), time::currentTimeMillis, error -> {}),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.atLeastOnce(),
                SettlementJournal.of(oneRecordPerSettlement));
        processing.process(
                UnitOfWorkTest.message(MessageId.earliest),
                time.nanoTime(),
                new Processing.Watch() {},
                () -> {},
                how -> {});

        assertThat(journaled).containsExactly("ack");
    }

    /**
     * Exactly-once: the settlement journal's record of an acknowledged delivery is made once its transaction ended, and
     * says its acknowledgement was committed in it; while the acknowledgement in the transaction is pending, no record.
     */
    @Test
    void exactlyOnceTheJournalRecordsADeliveryOnceItsTransactionCommitted() {
        List<String> transactions = new CopyOnWriteArrayList<>();
        List<String> journaled = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> acknowledgedInTransaction = new CompletableFuture<>();
        CommitStage commits = new CommitStage(
                "orders",
                timeout -> CompletableFuture.completedFuture(transaction(transactions.size() + 1, transactions)),
                new CommitStage.Limits(
                        Duration.ofSeconds(35), Duration.ofSeconds(10), new CommitBatch(1, Duration.ofMillis(10))),
                (inputs, transaction) -> acknowledgedInTransaction,
                new RecordingMetrics(),
                time);
        Processing processing = new Processing(
                SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                        .type(SubscriptionKind.SHARED)
                        .guarantee(Guarantee.EXACTLY_ONCE)
                        .failureBackoff(Optional.empty())
                        .build(),
                port("com.acme.Orders", CompletableFuture.completedFuture(Outcome.ack())),
                new SubscriptionServices(
                        consumer, null, time, new RecordingMetrics(), time::currentTimeMillis, error -> {}),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.exactlyOnce(commits),
                SettlementJournal.of((work, how, code, handlingNanos, committed) ->
                        journaled.add(how + " committed " + committed + " after " + transactions)));

        processing.process(
                UnitOfWorkTest.message(new MessageIdImpl(7, 1, -1), 1),
                time.nanoTime(),
                new Processing.Watch() {},
                () -> {},
                how -> {});
        assertThat(journaled).as("no record while the transaction is open").isEmpty();

        acknowledgedInTransaction.complete(null);
        time.advance(Duration.ofMillis(10));

        assertThat(journaled).containsExactly("ACK committed true after [commit (0,1)]");
    }

    @Test
    void aTracedDeliveryEndsItsSpanAtTheSettlementWithHowWhyAndTheCodeThatRanIt() {
        List<String> traced = new CopyOnWriteArrayList<>();
        Tracing tracing = new Tracing() {
            @Override
            public Handling start(String subscription, Message<?> message, int attempt) {
                traced.add("start " + subscription + " attempt " + attempt);
                return new Handling() {
                    @Override
                    public java.util.Map<String, String> context() {
                        return java.util.Map.of();
                    }

                    @Override
                    public Sending deadLetter(String topic) {
                        throw new AssertionError("no dead letter without a cap");
                    }

                    @Override
                    public Sending send(String topic) {
                        throw new AssertionError("nothing published");
                    }

                    @Override
                    public void end(Settled how, Failure failure, String code) {
                        traced.add("end " + how.label() + " " + failure.stage().label() + " by " + code);
                    }
                };
            }

            @Override
            public void close() {}
        };
        Processing processing = new Processing(
                SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                        .type(SubscriptionKind.SHARED)
                        .failureBackoff(Optional.empty())
                        .build(),
                port(
                        "com.acme.Orders (generation 1)",
                        CompletableFuture.failedFuture(new IllegalStateException("boom"))),
                new SubscriptionServices(
                        consumer, null, time, new RecordingMetrics(), time::currentTimeMillis, error -> {}),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.atLeastOnce(),
                TracingJournal.of(tracing, "orders"));

        processing.process(
                UnitOfWorkTest.message(MessageId.earliest),
                time.nanoTime(),
                new Processing.Watch() {},
                () -> {},
                how -> {});

        assertThat(traced)
                .containsExactly("start orders attempt 1", "end error handler by com.acme.Orders (generation 1)");
    }

    /**
     * Exactly-once, the last attempt failed, and the broker refuses every acknowledgement in a transaction as a
     * conflict: another copy of the input settled it, or holds it in its own transaction. The letter's transaction
     * aborts (its letter is never read), and the input is left alone: a negative acknowledgement would only send it
     * round again, past the cap, while the other copy settles it, or the broker brings it back once that copy's
     * transaction aborts. (Before, it was negatively acknowledged, and on its last attempt the Pulsar client's
     * dead-letter policy then wrote a second letter, with no cause and outside any transaction.)
     */
    @Test
    void exactlyOnceLeavesAnInputAloneWhoseLettersAcknowledgementIsRefusedAsAConflict() {
        List<String> letters = new CopyOnWriteArrayList<>();
        DeadLetterWriter<Message<?>> writer = (work, properties) -> {
            calls.add("letter");
            letters.add(work.transaction().map(t -> "in " + t.getTxnID()).orElse("outside any transaction"));
            return CompletableFuture.completedFuture(null);
        };
        List<String> transactions = new CopyOnWriteArrayList<>();
        CommitStage commits = new CommitStage(
                "orders",
                timeout -> CompletableFuture.completedFuture(transaction(transactions.size() + 1, transactions)),
                new CommitStage.Limits(
                        Duration.ofSeconds(35), Duration.ofSeconds(10), new CommitBatch(1, Duration.ofMillis(10))),
                (inputs, transaction) ->
                        CompletableFuture.failedFuture(new PulsarClientException.TransactionConflictException(
                                "position 7:1 is held by another transaction")),
                new RecordingMetrics(),
                time);
        Processing processing = new Processing(
                SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                        .type(SubscriptionKind.SHARED)
                        .guarantee(Guarantee.EXACTLY_ONCE)
                        .deadLetter(2, "persistent://public/default/orders-dlq")
                        .failureBackoff(Optional.empty())
                        .build(),
                port("com.acme.Orders", CompletableFuture.failedFuture(new IllegalStateException("boom"))),
                new SubscriptionServices(
                        consumer, writer, time, new RecordingMetrics(), time::currentTimeMillis, error -> {}),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.exactlyOnce(commits),
                Pipeline.Journal.NONE);

        processing.process(
                UnitOfWorkTest.message(new MessageIdImpl(7, 1, -1), 1),
                time.nanoTime(),
                new Processing.Watch() {},
                () -> {},
                how -> {});

        assertThat(calls).as("no negative acknowledgement").containsExactly("letter");
        assertThat(letters).singleElement().asString().startsWith("in ");
        assertThat(transactions).as("the letter's transaction is aborted").contains("abort (0,2)");
    }

    /**
     * The broker dispatched the last attempt of a failing message twice with the same redelivery count: the second copy
     * arrives while the first one's letter is being written, and a third once it is stored. Neither reaches the
     * handler, and one letter is written. (Before, the guard handed the twin over: the handler ran a third time at
     * maxAttempts 2, and a second letter was written.)
     */
    @Test
    void aCopyWhoseTwinIsDeadLetteredIsNeitherHandledNorDeadLetteredAgain() {
        List<CompletableFuture<Object>> letters = new CopyOnWriteArrayList<>();
        DeadLetterWriter<Message<?>> writer = (work, properties) -> {
            calls.add("letter");
            CompletableFuture<Object> stored = new CompletableFuture<>();
            letters.add(stored);
            return stored;
        };
        List<String> handled = new CopyOnWriteArrayList<>();
        Processing processing = new Processing(
                SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                        .type(SubscriptionKind.SHARED)
                        .deadLetter(2, "persistent://public/default/orders-dlq")
                        .failureBackoff(Optional.empty())
                        .build(),
                new HandlerPort() {
                    @Override
                    public Schema<?> schema() {
                        return Schema.BYTES;
                    }

                    @Override
                    public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                        handled.add("attempt " + work.attempt());
                        return CompletableFuture.failedFuture(new IllegalStateException("boom"));
                    }
                },
                new SubscriptionServices(
                        consumer, writer, time, new RecordingMetrics(), time::currentTimeMillis, error -> {}),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.atLeastOnce(),
                Pipeline.Journal.NONE);
        MessageId id = new MessageIdImpl(7, 1, -1);
        List<Optional<Settled>> settled = new CopyOnWriteArrayList<>();

        processing.process(
                UnitOfWorkTest.message(id, 1), time.nanoTime(), new Processing.Watch() {}, () -> {}, settled::add);
        processing.process(
                UnitOfWorkTest.message(id, 1), time.nanoTime(), new Processing.Watch() {}, () -> {}, settled::add);
        assertThat(letters).as("the letter is being written").hasSize(1);
        letters.get(0).complete(null);
        processing.process(
                UnitOfWorkTest.message(id, 1), time.nanoTime(), new Processing.Watch() {}, () -> {}, settled::add);

        assertThat(handled).containsExactly("attempt 2");
        assertThat(calls)
                .as("one letter; the original acknowledged once it is stored, the late copy acknowledged again")
                .containsExactly("letter", "acknowledge", "acknowledge");
        assertThat(settled).containsExactly(Optional.of(Settled.ERROR), Optional.empty(), Optional.empty());
    }

    /**
     * At a stop, the copies left in the consumer's queue are read: one whose twin was acknowledged (the broker
     * dispatched its entry twice) is acknowledged without a call, so closing the consumer does not hand it to another
     * runtime's handler (RollingRestartIT); a copy whose twin was retried, and one never seen, are left alone.
     */
    @Test
    void atAStopAQueuedCopyWhoseTwinWasAcknowledgedIsAcknowledgedAndNoOtherIs() {
        List<String> handled = new CopyOnWriteArrayList<>();
        Processing processing = new Processing(
                SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                        .type(SubscriptionKind.SHARED)
                        .failureBackoff(Optional.empty())
                        .build(),
                answering(work -> {
                    handled.add(work.id() + " attempt " + work.attempt());
                    return work.id().equals(new MessageIdImpl(7, 1, -1)) ? Outcome.ack() : Outcome.retry();
                }),
                new SubscriptionServices(
                        consumer, null, time, new RecordingMetrics(), time::currentTimeMillis, error -> {}),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.atLeastOnce(),
                Pipeline.Journal.NONE);
        MessageId acknowledged = new MessageIdImpl(7, 1, -1);
        MessageId retried = new MessageIdImpl(7, 2, -1);
        processing.process(
                UnitOfWorkTest.message(acknowledged, 1), time.nanoTime(), new Processing.Watch() {}, () -> {}, s -> {});
        processing.process(
                UnitOfWorkTest.message(retried, 1), time.nanoTime(), new Processing.Watch() {}, () -> {}, s -> {});
        calls.clear();

        assertThat(processing.acknowledgeIfTwinAcknowledged(UnitOfWorkTest.message(acknowledged, 1), time.nanoTime()))
                .as("the acknowledged copy's twin")
                .isTrue();
        assertThat(processing.acknowledgeIfTwinAcknowledged(UnitOfWorkTest.message(acknowledged, 2), time.nanoTime()))
                .as("the acknowledged message's next attempt is another delivery")
                .isFalse();
        assertThat(processing.acknowledgeIfTwinAcknowledged(UnitOfWorkTest.message(retried, 1), time.nanoTime()))
                .as("the retried copy's twin")
                .isFalse();
        assertThat(processing.acknowledgeIfTwinAcknowledged(
                        UnitOfWorkTest.message(new MessageIdImpl(7, 3, -1), 0), time.nanoTime()))
                .as("a copy never seen")
                .isFalse();

        assertThat(calls).as("one acknowledgement, of the twin").containsExactly("acknowledge");
        assertThat(handled).as("no call at the stop").hasSize(2);
    }

    /** A transaction {@code n} that notes its commit and abort in {@code ended}. */
    private static Transaction transaction(long n, List<String> ended) {
        TxnID id = new TxnID(0, n);
        return (Transaction) Proxy.newProxyInstance(
                Transaction.class.getClassLoader(),
                new Class<?>[] {Transaction.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getTxnID" -> id;
                    case "commit", "abort" -> {
                        ended.add(method.getName() + " " + id);
                        yield CompletableFuture.completedFuture(null);
                    }
                    case "getState" -> Transaction.State.OPEN;
                    case "toString" -> "transaction " + id;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** A port named {@code name} whose every call answers {@code outcome}. */
    private static final String DELAY_TOPIC = "persistent://public/default/orders-delay";

    /** A message read from the delay topic with {@code properties}, on its {@code redeliveryCount + 1}-th delivery. */
    private static Message<?> fromTheDelayTopic(Map<String, String> properties, int redeliveryCount) {
        MessageId id = new MessageIdImpl(9, 4, -1);
        return (Message<?>) Proxy.newProxyInstance(
                Message.class.getClassLoader(),
                new Class<?>[] {Message.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getMessageId" -> id;
                    case "getRedeliveryCount" -> redeliveryCount;
                    case "getPublishTime" -> 0L;
                    case "hasKey", "hasOrderingKey" -> false;
                    case "getTopicName" -> DELAY_TOPIC;
                    case "getProperties" -> properties;
                    case "getProperty" -> properties.get((String) args[0]);
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "toString" -> "copy " + id;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private Processing withDurableDelays(HandlerPort port, RecordingMetrics metrics) {
        return new Processing(
                SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                        .type(SubscriptionKind.SHARED)
                        .durableDelays(Duration.ofSeconds(5))
                        .build(),
                port,
                new SubscriptionServices(
                        consumer,
                        null,
                        time,
                        metrics,
                        time::currentTimeMillis,
                        error -> {},
                        OnCap.deadLetter(),
                        (work, properties, deliverAt) -> CompletableFuture.completedFuture(null)),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.atLeastOnce(),
                Pipeline.Journal.NONE);
    }

    @Test
    void aMessageOnTheDelayTopicWhoseOriginIsNotOneOfTheSubscriptionsTopicsIsAcknowledgedUnhandledAndCounted() {
        RecordingMetrics metrics = new RecordingMetrics();
        List<UnitOfWork<Message<?>>> handled = new CopyOnWriteArrayList<>();
        Processing processing = withDurableDelays(recording(handled), metrics);
        List<Optional<Settled>> settled = new CopyOnWriteArrayList<>();

        for (String origin : List.of("persistent://public/default/payments@1:2:-1", "no origin at all")) {
            processing.process(
                    fromTheDelayTopic(Map.of("settle.origin", origin, "settle.attempts", "1"), 0),
                    time.nanoTime(),
                    new Processing.Watch() {},
                    () -> {},
                    settled::add);
        }

        assertThat(handled).isEmpty();
        assertThat(calls).containsExactly("acknowledge", "acknowledge");
        assertThat(settled).containsExactly(Optional.empty(), Optional.empty());
        assertThat(metrics.durableDelaysRefused.get()).isEqualTo(2);
    }

    @Test
    void aDelayCopyIsHandledOnTheAttemptItCarriesAsTheMessageItCopies() {
        RecordingMetrics metrics = new RecordingMetrics();
        List<UnitOfWork<Message<?>>> handled = new CopyOnWriteArrayList<>();
        Processing processing = withDurableDelays(recording(handled), metrics);

        processing.process(
                fromTheDelayTopic(
                        Map.of("settle.origin", "persistent://public/default/orders@3:7:-1", "settle.attempts", "2"),
                        1),
                time.nanoTime(),
                new Processing.Watch() {},
                () -> {},
                how -> {});

        assertThat(handled).singleElement().satisfies(work -> {
            assertThat(work.attempt())
                    .as("2 made, and the copy's own second delivery")
                    .isEqualTo(4);
            assertThat(work.copyOf()).contains("persistent://public/default/orders@3:7:-1");
        });
        assertThat(calls).containsExactly("acknowledge");
        assertThat(metrics.durableDelaysRefused.get()).isZero();
    }

    /** A port that acknowledges every delivery and keeps it. */
    private static HandlerPort recording(List<UnitOfWork<Message<?>>> handled) {
        return answering(work -> {
            handled.add(work);
            return Outcome.ack();
        });
    }

    /** A port whose every call answers what {@code answer} says of its delivery, at once. */
    private static HandlerPort answering(Function<UnitOfWork<Message<?>>, Outcome> answer) {
        return new HandlerPort() {
            @Override
            public Schema<?> schema() {
                return Schema.BYTES;
            }

            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                return CompletableFuture.completedFuture(answer.apply(work));
            }
        };
    }

    private static HandlerPort port(String name, CompletableFuture<Outcome> outcome) {
        return new HandlerPort() {
            @Override
            public Schema<?> schema() {
                return Schema.BYTES;
            }

            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                return outcome;
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }

    @Test
    void aLastAttemptLetGoOfByAStopBeforeItsCallReturnedIsNeitherRetriedNorDeadLettered() {
        List<String> letters = new CopyOnWriteArrayList<>();
        RecordingMetrics metrics = new RecordingMetrics();
        Processing processing = new Processing(
                SubscriptionSpec.builder("sums", List.of("persistent://public/default/orders"))
                        .type(SubscriptionKind.SHARED)
                        .ackTimeout(java.time.Duration.ofSeconds(30))
                        .deadLetter(2, "persistent://public/default/orders-dlq")
                        .build(),
                windowedPortLetGoOfByAStop(),
                new SubscriptionServices(
                        consumer,
                        (work, properties) -> {
                            letters.add("letter of " + work.id());
                            return CompletableFuture.completedFuture(null);
                        },
                        time,
                        metrics,
                        time::currentTimeMillis,
                        error -> {}),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.atLeastOnce(),
                Pipeline.Journal.NONE);
        List<Optional<Settled>> settled = new CopyOnWriteArrayList<>();

        processing.process(
                lastAttempt(MessageId.earliest), time.nanoTime(), new Processing.Watch() {}, () -> {}, settled::add);

        // Left unacknowledged: it comes back to the next consumer with its count unchanged, not as a failed attempt.
        assertThat(calls).isEmpty();
        assertThat(letters).isEmpty();
        assertThat(metrics.deadLettered).hasValue(0);
        assertThat(settled).containsExactly(Optional.of(Settled.NONE));
    }

    @Test
    void aHandlerExceptionWhoseMessageThrowsIsSettledAsAFailureAndDeadLetteredOnTheLastAttempt() {
        List<java.util.Map<String, String>> letters = new CopyOnWriteArrayList<>();
        SubscriptionSpec spec = SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .type(SubscriptionKind.SHARED)
                .failureBackoff(Optional.empty())
                .deadLetter(2, "persistent://public/default/orders-dlq")
                .build();
        Processing processing = new Processing(
                spec,
                port("com.acme.Orders", CompletableFuture.failedFuture(new UnprintableException())),
                new SubscriptionServices(
                        consumer,
                        (work, properties) -> {
                            letters.add(properties);
                            return CompletableFuture.completedFuture(null);
                        },
                        time,
                        new RecordingMetrics(),
                        time::currentTimeMillis,
                        error -> {}),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.atLeastOnce(),
                Pipeline.Journal.NONE);
        List<Optional<Settled>> settled = new CopyOnWriteArrayList<>();

        processing.process(
                UnitOfWorkTest.message(MessageId.earliest),
                time.nanoTime(),
                new Processing.Watch() {},
                () -> {},
                settled::add);
        processing.process(
                lastAttempt(MessageId.earliest), time.nanoTime(), new Processing.Watch() {}, () -> {}, settled::add);

        assertThat(settled).containsExactly(Optional.of(Settled.ERROR), Optional.of(Settled.ERROR));
        assertThat(calls).containsExactly("negativeAcknowledge", "acknowledge");
        assertThat(letters)
                .singleElement()
                .satisfies(properties -> assertThat(properties)
                        .containsEntry(DeadLetterProperties.EXCEPTION_CLASS, UnprintableException.class.getName())
                        .containsEntry(
                                DeadLetterProperties.EXCEPTION_MESSAGE,
                                UnprintableException.class.getName()
                                        + " (its getMessage() threw java.lang.IllegalStateException)"));
        assertThat(logged.list)
                .singleElement()
                .satisfies(event ->
                        assertThat(event.getThrowableProxy().getMessage()).contains("getMessage() threw"));
    }

    /** A handler's exception that cannot say what it is: its message, and so its text, throws. */
    private static final class UnprintableException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        @Override
        public String getMessage() {
            throw new IllegalStateException("getMessage() of a handler's exception");
        }
    }

    /**
     * A windowed function's port called as a stop lets go of the open windows: the window its input was added to is
     * already let go of when the call returns ack (the stop began on another thread while this call ran).
     */
    private static HandlerPort windowedPortLetGoOfByAStop() {
        return new HandlerPort() {
            @Override
            public Schema<?> schema() {
                return Schema.BYTES;
            }

            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                work.outputs(null)
                        .add(CompletableFuture.failedFuture(new LeftUnacknowledged("subscription 'sums' stopped")));
                return CompletableFuture.completedFuture(Outcome.ack());
            }

            @Override
            public String toString() {
                return "function com.acme.Sums";
            }
        };
    }

    /** Attempt 2 of 2: its redelivery count is 1. */
    private static Message<?> lastAttempt(MessageId id) {
        Message<?> first = UnitOfWorkTest.message(id);
        return (Message<?>) java.lang.reflect.Proxy.newProxyInstance(
                Message.class.getClassLoader(),
                new Class<?>[] {Message.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getRedeliveryCount" -> 1;
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    default -> method.invoke(first, args);
                });
    }
}
