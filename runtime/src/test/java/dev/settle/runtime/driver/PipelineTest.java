package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.ExceptionRule;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.ManualTime;
import dev.settle.sdk.Outcome;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

/** The message path's slots: fixed, named, in order, each empty one a no-op. */
class PipelineTest {
    private final ManualTime time = new ManualTime();
    private final ConsumerCalls<Message<?>> consumer = new ConsumerCalls<>() {
        @Override
        public CompletionStage<Void> acknowledge(Message<?> message) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void negativeAcknowledge(Message<?> message) {}
    };

    @Test
    void aRunningSubscriptionListsItsPartsOneASlotInTheOrderADeliveryPassesThem() {
        SubscriptionSpec spec = SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .type(SubscriptionKind.SHARED)
                .deadLetter(3, "persistent://public/default/orders-dlq")
                .onException(
                        List.of(new ExceptionRule("java.io.IOException", ExceptionRule.Action.RETRY, Optional.empty())))
                .build();
        Processing processing = processing(
                spec,
                (work, properties) -> new CompletableFuture<>(),
                Pipeline.Journal.both(
                        traced(), SettlementJournal.of((work, how, code, handlingNanos, committed) -> {})));

        assertThat(processing.parts())
                .containsExactly(
                        "key hold: none",
                        "canary routing: none",
                        "batching: none",
                        "lease/timeout: none",
                        "handler: com.acme.Orders (generation 1)",
                        "breaker observation: none",
                        "retry or delay: onException [java.io.IOException → retry]",
                        "cap: maxAttempts 3",
                        "hold-for-fix or dead letter: dead letters to persistent://public/default/orders-dlq, written"
                                + " by Settle with their cause",
                        "journal: tracing, settlement journal");
    }

    @Test
    void theJournalSlotHoldsTheNoOpWhenNeitherTracingNorTheSettlementJournalIsOn() {
        Pipeline.Journal traced = traced();

        assertThat(Pipeline.Journal.both(TracingJournal.of(null, "orders"), SettlementJournal.of(Journal.NONE)))
                .isSameAs(Pipeline.Journal.NONE);
        assertThat(Pipeline.Journal.both(traced, SettlementJournal.of(Journal.NONE)))
                .isSameAs(traced);
    }

    @Test
    void aSubscriptionWithoutFeaturesHasTheNoOpInEverySlotButTheHandlers() {
        SubscriptionSpec spec = SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .type(SubscriptionKind.EXCLUSIVE)
                .build();
        Processing processing = processing(spec, null, null);

        assertThat(processing.parts())
                .extracting(part -> part.substring(part.indexOf(": ") + 2))
                .containsExactly(
                        "none",
                        "none",
                        "none",
                        "none",
                        "com.acme.Orders (generation 1)",
                        "none",
                        "none",
                        "none",
                        "none",
                        "none");
    }

    @Test
    void aSwapChangesTheCodeInTheHandlerSlotAndKeepsTheParts() {
        SubscriptionSpec spec = SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .type(SubscriptionKind.SHARED)
                .onException(
                        List.of(new ExceptionRule("java.io.IOException", ExceptionRule.Action.DROP, Optional.empty())))
                .build();
        Processing processing = processing(spec, null, null);

        processing.switchTo(port("com.acme.Orders (generation 2)", new CopyOnWriteArrayList<>()));

        assertThat(processing.parts())
                .contains(
                        "handler: com.acme.Orders (generation 2)",
                        "retry or delay: onException [java.io.IOException → drop]");
    }

    @Test
    void theCallPartsWrapTheHandlerInTheSlotsOrderTheBreakerInnermost() throws Exception {
        List<String> passed = new CopyOnWriteArrayList<>();
        Pipeline pipeline = new Pipeline(
                new Pipeline.KeyHold() {
                    @Override
                    public HandlerPort around(HandlerPort next) {
                        return passing("key hold", next, passed);
                    }
                },
                new Pipeline.CanaryRouting() {
                    @Override
                    public HandlerPort around(HandlerPort next) {
                        return passing("canary routing", next, passed);
                    }
                },
                new Pipeline.Batching() {
                    @Override
                    public HandlerPort around(HandlerPort next) {
                        return passing("batching", next, passed);
                    }
                },
                new Pipeline.Lease() {
                    @Override
                    public HandlerPort around(HandlerPort next) {
                        return passing("lease", next, passed);
                    }
                },
                new Pipeline.Breaker() {
                    @Override
                    public HandlerPort around(HandlerPort next) {
                        return passing("breaker observation", next, passed);
                    }
                },
                new Pipeline.RetryOrDelay() {
                    @Override
                    public HandlerPort around(HandlerPort next) {
                        return passing("retry or delay", next, passed);
                    }
                },
                Pipeline.Cap.NONE,
                new Pipeline.Part() {},
                Pipeline.Journal.NONE);

        pipeline.around(port("handler", passed))
                .handle(new UnitOfWork<>(UnitOfWorkTest.message(MessageId.earliest), MessageId.earliest, 1, false, 0));

        assertThat(passed)
                .containsExactly(
                        "key hold",
                        "canary routing",
                        "batching",
                        "lease",
                        "retry or delay",
                        "breaker observation",
                        "handler");
    }

    @Test
    void anEmptyCallSlotCostsNothingPerMessageItHandsBackThePortItself() {
        HandlerPort handler = port("com.acme.Orders", new CopyOnWriteArrayList<>());
        SubscriptionSpec spec = SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .build();
        Pipeline empty = Pipeline.of(spec, DeadLettering.byClient(spec, time), Pipeline.Journal.NONE);

        assertThat(empty.around(handler)).isSameAs(handler);
    }

    private Processing processing(
            SubscriptionSpec spec, DeadLetterWriter<Message<?>> letters, Pipeline.Journal journal) {
        return new Processing(
                spec,
                port("com.acme.Orders (generation 1)", new CopyOnWriteArrayList<>()),
                new SubscriptionServices(
                        consumer, letters, time, new RecordingMetrics(), time::currentTimeMillis, error -> {}),
                Processing.Caller.withoutConsumer(new PendingOutputs(1000, time)),
                SettlementStrategy.atLeastOnce(),
                journal == null ? Pipeline.Journal.NONE : journal);
    }

    private static Pipeline.Journal traced() {
        return TracingJournal.of(
                new Tracing() {
                    @Override
                    public Handling start(String subscription, Message<?> message, int attempt) {
                        throw new AssertionError("no delivery here");
                    }

                    @Override
                    public void close() {}
                },
                "orders");
    }

    /** A port that notes {@code name} in {@code passed}, then calls {@code next}. */
    private static HandlerPort passing(String name, HandlerPort next, List<String> passed) {
        return new HandlerPort() {
            @Override
            public Schema<?> schema() {
                return next.schema();
            }

            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) throws Exception {
                passed.add(name);
                return next.handle(work);
            }
        };
    }

    /** The code: notes that it ran, and acknowledges. */
    private static HandlerPort port(String name, List<String> passed) {
        return new HandlerPort() {
            @Override
            public Schema<?> schema() {
                return Schema.BYTES;
            }

            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                passed.add("handler");
                return CompletableFuture.completedFuture(Outcome.ack());
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }
}
