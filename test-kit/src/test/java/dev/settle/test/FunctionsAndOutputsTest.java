package dev.settle.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.manifest.ExceptionRule;
import dev.settle.runtime.manifest.FailureBackoff;
import dev.settle.runtime.manifest.FunctionSettings;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import dev.settle.sdk.Publisher;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pulsar.functions.api.Context;
import org.apache.pulsar.functions.api.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Functions, handler publishes and onException on the kit, built as Settle builds them. */
class FunctionsAndOutputsTest {
    private static final String IN = "persistent://public/default/orders";
    private static final String OUT = "persistent://public/default/orders-out";
    private static final String DLQ = "persistent://public/default/orders-dlq";

    private SettleTestDriver settle;

    @AfterEach
    void close() {
        if (settle != null) {
            settle.close();
        }
    }

    /** Upper-cases its input; "boom" throws, "nothing" returns null; logs, records a metric, publishes an audit. */
    static final class Shout implements Function<String, String> {
        @Override
        public String process(String input, Context context) {
            if (input.equals("boom")) {
                throw new IllegalStateException("boom");
            }
            if (input.equals("nothing")) {
                return null;
            }
            context.getLogger().info("shouting {}", input);
            context.recordMetric("length", input.length());
            context.publish("audit", "saw " + input);
            return input.toUpperCase() + context.getUserConfigValueOrDefault("suffix", "");
        }
    }

    /** Gives up on "doomed" with context.fatal. */
    static final class GiveUp implements Function<String, String> {
        @Override
        public String process(String input, Context context) {
            if (input.equals("doomed")) {
                context.fatal(new IllegalStateException("cannot go on with " + input));
            }
            return input;
        }
    }

    /**
     * At concurrency above 1 the call runs on the kit's pool, and its context.fatal reaches the test as at
     * concurrency 1: the send throws it and the message stays unacknowledged (before, the kit lost it on the pool
     * thread and waited for that call for ever).
     */
    @Test
    @org.junit.jupiter.api.Timeout(60)
    void contextFatalReachesTheTestAboveConcurrencyOneAsAtOne() throws Exception {
        for (int concurrency : new int[] {1, 4}) {
            settle = SettleTestDriver.forFunction(
                    new GiveUp(),
                    String.class,
                    String.class,
                    function(GiveUp.class.getName()).concurrency(concurrency).build());

            assertThatThrownBy(() -> settle.send("doomed"))
                    .as("concurrency %d", concurrency)
                    .isInstanceOf(VirtualMachineError.class)
                    .hasMessageContaining("called context.fatal")
                    .hasRootCauseMessage("cannot go on with doomed");
            assertThat(settle.subscription().unacknowledged()).isEqualTo(1);
            settle.close();
            settle = null;
        }
    }

    /** Throws on its first call; records the topic each call's record names. */
    static final class FailsOnce implements Function<String, String> {
        final List<String> recordTopics = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        public String process(String input, Context context) {
            recordTopics.add(context.getCurrentRecord().getTopicName().orElse("(none)"));
            if (recordTopics.size() == 1) {
                throw new IllegalStateException("busy");
            }
            return input;
        }
    }

    @Test
    void aDurableDelayCopysRecordNamesItsOriginalsTopicNotTheDelayTopic() throws Exception {
        FailsOnce fails = new FailsOnce();
        settle = SettleTestDriver.forFunction(
                fails,
                String.class,
                String.class,
                function(FailsOnce.class.getName())
                        .durableDelays(Duration.ofSeconds(5))
                        .onException(List.of(new ExceptionRule(
                                IllegalStateException.class.getName(),
                                ExceptionRule.Action.RETRY_AFTER,
                                Optional.of(Duration.ofSeconds(30)))))
                        .build());

        settle.send("later");
        settle.advance(Duration.ofSeconds(30));

        assertThat(settle.deliveries())
                .extracting(Delivered::topic, Delivered::attempt, Delivered::outcome)
                .containsExactly(
                        tuple(IN, 1, Settled.RETRY_AFTER),
                        tuple("persistent://public/default/shout-delay", 2, Settled.ACK));
        assertThat(fails.recordTopics)
                .as("context.getCurrentRecord().getTopicName()")
                .containsExactly(IN, IN);
    }

    private static SubscriptionSpec.Builder function(String className) {
        return SubscriptionSpec.builder("shout", List.of(IN))
                .function(className, new FunctionSettings(Optional.of(OUT), Optional.empty(), Map.of()));
    }

    @Test
    void aFunctionsReturnValueIsPublishedWithTheInputsKeyAndPropertiesThenTheInputIsAcknowledged() throws Exception {
        settle = SettleTestDriver.forFunction(
                new Shout(),
                String.class,
                String.class,
                function(Shout.class.getName()).config(Map.of("suffix", "!")).build());

        settle.message("hi").key("k-1").property("trace", "t-1").send();

        assertThat(settle.outputs(OUT))
                .extracting(
                        Published::value,
                        Published::key,
                        output -> output.properties().get("trace"))
                .containsExactly(tuple("HI!", Optional.of("k-1"), "t-1"));
        assertThat(settle.outputs(OUT).get(0).properties())
                .containsOnlyKeys("trace", "__pfn_input_topic__", "__pfn_input_msg_id__");
        assertThat(settle.topicTexts(OUT)).containsExactly("HI!");
        assertThat(settle.outputs("audit")).extracting(Published::text).containsExactly("saw hi");
        assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK);
        assertThat(settle.subscription().unacknowledged()).isZero();
        FunctionRecording context = settle.function();
        assertThat(context.logged()).containsExactly("INFO shouting hi");
        assertThat(context.userConfig()).isEqualTo(Map.of("suffix", "!"));
        assertThat(context.metrics()).isEqualTo(Map.of("length", List.of(2.0)));
        assertThat(context.published())
                .extracting(Published::topic)
                .containsExactly("persistent://public/default/audit", OUT);
        assertThat(settle.metric("settle_function_metric", "subscription", "shout", "name", "length"))
                .isEqualTo(1);
    }

    @Test
    void aFunctionReturningNullIsAcknowledgedAndPublishesNothing() throws Exception {
        settle = SettleTestDriver.forFunction(
                new Shout(),
                String.class,
                String.class,
                function(Shout.class.getName()).build());

        settle.send("nothing");

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK);
        assertThat(settle.outputs()).isEmpty();
    }

    @Test
    void aFunctionThatThrowsIsRetriedAfterTheBackoffThenDeadLettered() throws Exception {
        settle = SettleTestDriver.forFunction(
                new Shout(),
                String.class,
                String.class,
                function(Shout.class.getName()).deadLetter(3, DLQ).build());

        settle.send("boom");
        settle.advance(Duration.ofSeconds(1));

        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome, Delivered::at)
                .containsExactly(
                        tuple(1, Settled.ERROR, Duration.ZERO),
                        tuple(2, Settled.ERROR, Duration.ofMillis(100)),
                        tuple(3, Settled.ERROR, Duration.ofMillis(300)));
        assertThat(settle.deadLetters()).extracting(DeadLetterMessage::text).containsExactly("boom");
        assertThat(settle.outputs()).isEmpty();
    }

    @Test
    void anOutputThatCannotBeStoredLeavesTheInputUnacknowledgedAndItComesBack() throws Exception {
        settle = SettleTestDriver.forFunction(
                new Shout(),
                String.class,
                String.class,
                function(Shout.class.getName()).build());
        settle.failPublishesTo(OUT);

        settle.send("hi");

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.ERROR);
        assertThat(settle.subscription().unacknowledged()).isEqualTo(1);
        assertThat(settle.outputs(OUT)).isEmpty();
        // The audit went out before the output failed: a retried input publishes again (at-least-once).
        assertThat(settle.outputs("audit")).hasSize(1);

        settle.acceptPublishesTo(OUT);
        settle.advance(Duration.ofMillis(100));

        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome, Delivered::at)
                .containsExactly(tuple(1, Settled.ERROR, Duration.ZERO), tuple(2, Settled.ACK, Duration.ofMillis(100)));
        assertThat(settle.outputs(OUT)).extracting(Published::value).containsExactly("HI");
        assertThat(settle.outputs("audit")).hasSize(2);
        assertThat(settle.subscription().unacknowledged()).isZero();
    }

    /** Answers on a thread of its own, 50 ms later: the input is settled when the future completes. */
    static final class Later implements Function<String, java.util.concurrent.CompletableFuture<String>> {
        @Override
        public java.util.concurrent.CompletableFuture<String> process(String input, Context context) {
            return java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> input + " later",
                    java.util.concurrent.CompletableFuture.delayedExecutor(
                            50, java.util.concurrent.TimeUnit.MILLISECONDS));
        }
    }

    @Test
    void aFunctionsFutureIsSettledWhenItCompletesOnItsOwnThreadAndSendReturnsAfterThat() throws Exception {
        settle = SettleTestDriver.forFunction(
                new Later(),
                String.class,
                String.class,
                function(Later.class.getName()).build());

        settle.send("a");

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK);
        assertThat(settle.outputs(OUT)).extracting(Published::value).containsExactly("a later");
        assertThat(settle.metric("settle_in_flight", "subscription", "shout")).isZero();
    }

    /** Starts a thread in initialize that outlives it, and records the context class loader of its calls. */
    static final class LeavesAThread implements Function<String, String> {
        volatile Thread leftBehind;
        volatile ClassLoader processLoader;

        @Override
        public void initialize(Context context) {
            leftBehind = new Thread(() -> {
                try {
                    // Blocks until interrupted: the latch is never counted down.
                    new java.util.concurrent.CountDownLatch(1).await();
                } catch (InterruptedException e) {
                    // stopped by the test
                }
            });
            leftBehind.setDaemon(true);
            leftBehind.start();
        }

        @Override
        public String process(String input, Context context) {
            processLoader = Thread.currentThread().getContextClassLoader();
            return null;
        }
    }

    @Test
    void aThreadAFunctionLeavesBehindNoLongerReachesItsClassLoaderOnceTheFunctionIsClosed() throws Exception {
        LeavesAThread function = new LeavesAThread();
        settle = SettleTestDriver.forFunction(
                function,
                String.class,
                String.class,
                function(LeavesAThread.class.getName()).build());
        settle.send("a");
        ClassLoader inherited = function.leftBehind.getContextClassLoader();
        try {
            // The net over the function's loader, the same for its calls, not the loader itself.
            assertThat(inherited).isSameAs(function.processLoader).isNotSameAs(LeavesAThread.class.getClassLoader());
            assertThat(inherited.loadClass(LeavesAThread.class.getName())).isSameAs(LeavesAThread.class);

            settle.close();

            assertThatThrownBy(() -> inherited.loadClass(LeavesAThread.class.getName()))
                    .isInstanceOf(ClassNotFoundException.class)
                    .hasMessageContaining("is closed");
        } finally {
            function.leftBehind.interrupt();
        }
    }

    /** Publishes "<value> seen" to the output through the SDK, then acks. */
    static final class Forwarding implements Handler<String> {
        private Publisher<String> out;

        @Override
        public void open(HandlerContext context) {
            out = context.publisher("orders-out", String.class);
        }

        @Override
        public Outcome handle(Delivery<String> delivery) {
            out.publish(delivery, delivery.value() + " seen");
            return Outcome.ack();
        }
    }

    @Test
    void aHandlersPublishIsRecordedAndItsAckWaitsForIt() throws Exception {
        settle = SettleTestDriver.forHandler(
                new Forwarding(),
                String.class,
                SubscriptionSpec.builder("forward", List.of(IN))
                        .failureBackoff(
                                Optional.of(new FailureBackoff(Duration.ofSeconds(1), 2, Duration.ofSeconds(5))))
                        .build());

        settle.message("a").key("k").send();
        settle.failPublishesTo("orders-out");
        settle.send("b");

        assertThat(settle.outputs(OUT))
                .extracting(Published::subscription, Published::text, Published::key)
                .containsExactly(tuple("forward", "a seen", Optional.of("k")));
        assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK, Settled.ERROR);

        settle.acceptPublishesTo("orders-out");
        settle.advance(Duration.ofSeconds(1));

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK, Settled.ERROR, Settled.ACK);
        assertThat(settle.subscription().published())
                .extracting(Published::text)
                .containsExactly("a seen", "b seen");
    }

    /** Throws the exception its input names. */
    static final class Throwing implements Handler<String> {
        @Override
        public Outcome handle(Delivery<String> delivery) {
            if (delivery.value().equals("invalid") && delivery.attempt() == 1) {
                throw new IllegalArgumentException("invalid");
            }
            if (delivery.value().equals("busy") && delivery.attempt() == 1) {
                throw new java.util.ConcurrentModificationException("busy");
            }
            return Outcome.ack();
        }
    }

    @Test
    void onExceptionMapsAThrownTypeAndItsSubclassesToTheirOutcome() throws Exception {
        settle = SettleTestDriver.forHandler(
                new Throwing(),
                String.class,
                SubscriptionSpec.builder("rules", List.of(IN))
                        .onException(List.of(
                                new ExceptionRule(
                                        IllegalArgumentException.class.getName(),
                                        ExceptionRule.Action.DROP,
                                        Optional.empty()),
                                new ExceptionRule(
                                        RuntimeException.class.getName(),
                                        ExceptionRule.Action.RETRY_AFTER,
                                        Optional.of(Duration.ofSeconds(10)))))
                        .build());

        settle.send("invalid");
        settle.send("busy");
        settle.advance(Duration.ofSeconds(10));

        assertThat(settle.deliveries())
                .extracting(Delivered::text, Delivered::attempt, Delivered::outcome, Delivered::at)
                .containsExactly(
                        tuple("invalid", 1, Settled.DROP, Duration.ZERO),
                        tuple("busy", 1, Settled.RETRY_AFTER, Duration.ZERO),
                        tuple("busy", 2, Settled.ACK, Duration.ofSeconds(10)));
    }
}
