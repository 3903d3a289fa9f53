package dev.settle.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.driver.Settled;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.RetryOrder;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.Handler;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import dev.settle.testbroker.Waits;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SettleTestDriverTest {
    private static final String TOPIC = "persistent://public/default/orders";
    private static final String DLQ = "persistent://public/default/orders-dlq";

    private SettleTestDriver settle;

    @AfterEach
    void close() {
        if (settle != null) {
            settle.close();
        }
    }

    /** A String handler deciding by its delivery; records every delivery it saw. */
    private static final class Scripted implements Handler<String> {
        final Function<Delivery<String>, Outcome> decide;
        final List<Delivery<String>> seen = Collections.synchronizedList(new ArrayList<>());
        HandlerContext context;

        Scripted(Function<Delivery<String>, Outcome> decide) {
            this.decide = decide;
        }

        @Override
        public void open(HandlerContext context) {
            this.context = context;
        }

        @Override
        public Outcome handle(Delivery<String> delivery) {
            seen.add(delivery);
            return decide.apply(delivery);
        }
    }

    private static SubscriptionSpec.Builder shared() {
        return SubscriptionSpec.builder("orders", List.of(TOPIC));
    }

    private SettleTestDriver start(Scripted handler, SubscriptionSpec spec) throws Exception {
        settle = SettleTestDriver.forHandler(handler, String.class, spec);
        return settle;
    }

    private static List<Integer> attempts(List<Delivered> deliveries) {
        return deliveries.stream().map(Delivered::attempt).toList();
    }

    /**
     * The outage circuit breaker runs on the kit's clock, as the runtime runs it on the real one: five keys failing
     * with an IOException within 2 s of virtual time open it, receiving pauses, the failing messages are held without
     * spending attempts, and the first successful probe closes it and hands them out again.
     */
    @Test
    void fiveKeysFailingWithAnIOExceptionOpenTheBreakerAndASuccessfulProbeClosesIt() throws Exception {
        AtomicBoolean down = new AtomicBoolean(true);
        Scripted handler = new Scripted(delivery -> {
            if (down.get()) {
                throw new UncheckedIOException(new IOException("the database is down"));
            }
            return Outcome.ack();
        });
        start(handler, shared().deadLetter(5, DLQ).build());
        TestSubscription orders = settle.subscription();
        assertThat(orders.breakerState()).isEqualTo("closed");

        for (int key = 0; key < 5; key++) {
            settle.message("m" + key).key("k" + key).send();
            settle.advance(Duration.ofMillis(10));
        }
        assertThat(orders.breakerState()).isEqualTo("open");
        assertThat(orders.breakerReason())
                .startsWith("5 keys failed with a dependency's cause within 2s")
                .endsWith("the last with java.io.UncheckedIOException");
        // Paused: a message sent while it is open is not handed out.
        settle.message("later").key("k9").send();
        assertThat(handler.seen).hasSize(5);

        // It opened at 40 ms, so the first probe comes at 140 ms; the failures' 100 ms backoffs end from 100 to 130 ms,
        // and each is held instead of negatively acknowledged.
        settle.advance(Duration.ofMillis(85));
        assertThat(orders.heldForOutage()).isEqualTo(5);
        assertThat(orders.breakerState()).isEqualTo("open");
        down.set(false);
        settle.advance(Duration.ofMillis(10));

        assertThat(orders.breakerState()).isEqualTo("closed");
        assertThat(orders.heldForOutage()).isZero();
        assertThat(orders.deadLetters()).isEmpty();
        assertThat(orders.unacknowledged()).isZero();
        assertThat(orders.consumerCalls())
                .extracting(ConsumerCall::kind)
                .as("held, never negatively acknowledged")
                .containsOnly(ConsumerCall.Kind.ACKNOWLEDGE);
        // Each held message came back with the attempt it had: the outage spent none.
        assertThat(settle.deliveries())
                .filteredOn(delivery -> delivery.outcome() == Settled.ACK)
                .hasSize(6)
                .allSatisfy(delivery -> assertThat(delivery.attempt()).isEqualTo(1));
    }

    @Test
    void anAckIsAcknowledgedOnceAndTheHandlerSeesTheMessageAsPublished() throws Exception {
        Scripted handler = new Scripted(delivery -> Outcome.ack());
        start(handler, shared().config(Map.of("greeting", "hi")).build());

        Instant eventTime = Instant.parse("2026-03-01T10:00:00Z");
        String id = settle.message("hello")
                .key("k1")
                .property("trace", "t-1")
                .eventTime(eventTime)
                .send();

        assertThat(settle.deliveries()).singleElement().satisfies(delivery -> {
            assertThat(delivery.outcome()).isEqualTo(Settled.ACK);
            assertThat(delivery.attempt()).isEqualTo(1);
            assertThat(delivery.value()).isEqualTo("hello");
            assertThat(delivery.messageId()).isEqualTo(id);
        });
        Delivery<String> seen = handler.seen.get(0);
        assertThat(seen.value()).isEqualTo("hello");
        assertThat(seen.key()).contains("k1");
        assertThat(seen.properties()).containsExactlyEntriesOf(Map.of("trace", "t-1"));
        assertThat(seen.topic()).isEqualTo(TOPIC);
        assertThat(seen.messageId()).isEqualTo(id).matches("\\d+:0:-1");
        assertThat(seen.maxAttempts()).isEmpty();
        assertThat(handler.context.subscription()).isEqualTo("orders");
        assertThat(handler.context.topics()).containsExactly(TOPIC);
        assertThat(handler.context.config()).containsEntry("greeting", "hi");
        assertThat(settle.subscription().consumerCalls())
                .extracting(ConsumerCall::kind)
                .containsExactly(ConsumerCall.Kind.ACKNOWLEDGE);
        assertThat(settle.subscription().unacknowledged()).isZero();
        assertThat(settle.metric("settle_outcomes_total", "subscription", "orders", "outcome", "ack"))
                .isEqualTo(1);
        assertThat(settle.metric("settle_deliveries_total", "subscription", "orders"))
                .isEqualTo(1);
    }

    @Test
    void aShortTopicNameWrittenInCodeMeansThePublicDefaultNamespaceAsInTheManifest() throws Exception {
        Scripted handler = new Scripted(delivery -> Outcome.ack());
        start(handler, SubscriptionSpec.builder("orders", List.of("orders")).build());

        settle.send("a");
        settle.message("b").topic("persistent://public/default/orders").send();

        assertThat(handler.seen).extracting(Delivery::topic).containsExactly(TOPIC, TOPIC);
        assertThatThrownBy(() -> settle.message("c").topic("payments").send())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("subscription 'orders' does not consume persistent://public/default/payments; it consumes"
                        + " orders");
    }

    @Test
    void aDropIsAcknowledgedAndCountedApart() throws Exception {
        start(new Scripted(delivery -> Outcome.drop()), shared().build());

        settle.send("junk");

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.DROP);
        assertThat(settle.subscription().consumerCalls())
                .extracting(ConsumerCall::kind)
                .containsExactly(ConsumerCall.Kind.ACKNOWLEDGE);
        assertThat(settle.subscription().outcomeCount(Settled.DROP)).isEqualTo(1);
        assertThat(settle.subscription().outcomeCount(Settled.ACK)).isZero();
    }

    @Test
    void aRetryComesBackAtOnceUntilTheCapThenGoesToTheDeadLetterTopicWithTheClientsPropertiesAndSettles()
            throws Exception {
        start(
                new Scripted(delivery -> Outcome.retry()),
                shared().deadLetter(3, DLQ).build());

        String id = settle.message("poison").key("k").property("origin", "test").send();

        assertThat(attempts(settle.deliveries())).containsExactly(1, 2, 3);
        assertThat(settle.subscription().outcomes()).containsOnly(Settled.RETRY);
        assertThat(settle.elapsed()).isZero();
        assertThat(settle.deadLetters()).singleElement().satisfies(dead -> {
            assertThat(dead.topic()).isEqualTo(DLQ);
            assertThat(dead.text()).isEqualTo("poison");
            assertThat(dead.key()).contains("k");
            assertThat(dead.properties())
                    .containsAllEntriesOf(Map.of(
                            "origin",
                            "test",
                            DeadLetterMessage.REAL_TOPIC,
                            TOPIC,
                            DeadLetterMessage.REAL_SUBSCRIPTION,
                            "orders",
                            DeadLetterMessage.ORIGIN_MESSAGE_ID,
                            id,
                            "settle.stage",
                            "retry",
                            "settle.attempts",
                            "3",
                            "settle.subscription",
                            "orders"))
                    .containsKeys("settle.first.attempt.time", "settle.last.attempt.time", "settle.instance")
                    // The handler asked for the retry: nothing was thrown.
                    .doesNotContainKeys("settle.exception.class", "settle.exception.stacktrace");
        });
        assertThat(settle.topicTexts(DLQ)).containsExactly("poison");
        assertThat(settle.subscription().unacknowledged()).isZero();
        assertThat(settle.metric("settle_dead_lettered_total", "subscription", "orders"))
                .isEqualTo(1);
    }

    @Test
    void theHandlerSeesItsAttemptAndTheCap() throws Exception {
        Scripted handler = new Scripted(delivery -> delivery.isLastAttempt() ? Outcome.drop() : Outcome.retry());
        start(handler, shared().deadLetter(4, DLQ).build());

        settle.send("m");

        assertThat(handler.seen).extracting(Delivery::attempt).containsExactly(1, 2, 3, 4);
        assertThat(handler.seen.get(0).maxAttempts()).hasValue(4);
        assertThat(settle.subscription().outcomes())
                .containsExactly(Settled.RETRY, Settled.RETRY, Settled.RETRY, Settled.DROP);
        assertThat(settle.deadLetters()).isEmpty();
    }

    @Test
    void aRetryAfterIsHeldUntilTheClockReachesIt() throws Exception {
        start(
                new Scripted(delivery ->
                        delivery.attempt() == 1 ? Outcome.retryAfter(Duration.ofSeconds(30)) : Outcome.ack()),
                shared().build());

        settle.send("later");
        assertThat(settle.subscription().outcomes()).containsExactly(Settled.RETRY_AFTER);
        assertThat(settle.metric("settle_held_retries", "subscription", "orders"))
                .isEqualTo(1);

        settle.advance(Duration.ofMillis(29_999));
        assertThat(settle.deliveries()).hasSize(1);

        settle.advance(Duration.ofMillis(1));
        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome, Delivered::at)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(1, Settled.RETRY_AFTER, Duration.ZERO),
                        org.assertj.core.groups.Tuple.tuple(2, Settled.ACK, Duration.ofSeconds(30)));
        assertThat(settle.metric("settle_held_retries", "subscription", "orders"))
                .isZero();
    }

    /** A handler whose call takes time on the kit's clock: it sleeps there, as a slow dependency would block. */
    private final class Sleeping implements Handler<String> {
        final List<String> interrupted = Collections.synchronizedList(new ArrayList<>());
        private final Duration first;
        private final Optional<Duration> extendBy;
        private final Duration then;

        /** Sleeps {@code first}, then, when {@code extendBy} is given, extends by it and sleeps {@code then}. */
        Sleeping(Duration first, Optional<Duration> extendBy, Duration then) {
            this.first = first;
            this.extendBy = extendBy;
            this.then = then;
        }

        @Override
        public Outcome handle(Delivery<String> delivery) throws Exception {
            try {
                settle.sleep(first);
                if (extendBy.isPresent()) {
                    delivery.extend(extendBy.get());
                    settle.sleep(then);
                }
                return Outcome.ack();
            } catch (InterruptedException e) {
                interrupted.add(settle.elapsed() + " " + e.getMessage());
                throw e;
            }
        }
    }

    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aCallPastHandlerTimeoutIsGivenUpAtItsDeadlineAsATimeoutAttemptAndDeadLetteredWithStageTimeoutAtTheCap()
            throws Exception {
        Sleeping hangs = new Sleeping(Duration.ofMinutes(5), Optional.empty(), Duration.ZERO);
        settle = SettleTestDriver.forHandler(
                hangs,
                String.class,
                shared().handlerTimeout(Duration.ofSeconds(10))
                        .deadLetter(3, DLQ)
                        .build());

        settle.send("hangs");
        assertThat(settle.elapsed())
                .as("given up at its deadline, not after its 5 min")
                .isEqualTo(Duration.ofSeconds(10));
        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(1, Settled.ERROR));
        assertThat(hangs.interrupted).singleElement().asString().startsWith("PT10S ");

        settle.advance(Duration.ofMinutes(2));

        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(1, Settled.ERROR),
                        org.assertj.core.groups.Tuple.tuple(2, Settled.ERROR),
                        org.assertj.core.groups.Tuple.tuple(3, Settled.ERROR));
        assertThat(settle.metric("settle_failures_total", "subscription", "orders", "stage", "timeout"))
                .isEqualTo(3);
        assertThat(settle.deadLetters())
                .singleElement()
                .satisfies(dead -> assertThat(dead.properties())
                        .containsEntry("settle.stage", "timeout")
                        .containsEntry("settle.attempts", "3"));
        assertThat(settle.subscription().unacknowledged()).isZero();
    }

    @Test
    @org.junit.jupiter.api.Timeout(60)
    void aCallThatExtendsItsLeaseRunsPastHandlerTimeoutToItsEnd() throws Exception {
        Sleeping extending =
                new Sleeping(Duration.ofSeconds(8), Optional.of(Duration.ofSeconds(30)), Duration.ofSeconds(25));
        settle = SettleTestDriver.forHandler(
                extending,
                String.class,
                shared().handlerTimeout(Duration.ofSeconds(10))
                        .deadLetter(3, DLQ)
                        .build());

        settle.send("long job");

        assertThat(settle.elapsed()).isEqualTo(Duration.ofSeconds(33));
        assertThat(extending.interrupted).isEmpty();
        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(1, Settled.ACK));
        assertThat(settle.metric("settle_failures_total", "subscription", "orders", "stage", "timeout"))
                .isZero();
    }

    @Test
    void sleepIsForAHandlersCall() throws Exception {
        start(new Scripted(delivery -> Outcome.ack()), shared().build());

        assertThatThrownBy(() -> settle.sleep(Duration.ofSeconds(1)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("advance(duration)");
    }

    @Test
    void aDurableDelayIsACopyOnTheDelayTopicHandledAsTheSameMessageWhenTheClockReachesIt() throws Exception {
        Scripted handler = new Scripted(
                delivery -> delivery.attempt() == 1 ? Outcome.retryAfter(Duration.ofSeconds(30)) : Outcome.ack());
        start(handler, shared().durableDelays(Duration.ofSeconds(5)).build());

        settle.message("later").key("k1").property("trace", "t-1").send();
        assertThat(settle.metric("settle_held_retries", "subscription", "orders"))
                .as("nothing held in the process")
                .isZero();
        assertThat(settle.metric("settle_durable_delays_published_total", "subscription", "orders"))
                .isEqualTo(1);
        assertThat(settle.subscription().consumerCalls())
                .as("the original acknowledged once its copy is stored")
                .extracting(ConsumerCall::kind)
                .containsExactly(ConsumerCall.Kind.ACKNOWLEDGE);

        settle.advance(Duration.ofMillis(29_999));
        assertThat(settle.deliveries()).hasSize(1);
        settle.advance(Duration.ofMillis(1));

        assertThat(settle.deliveries())
                .extracting(Delivered::attempt, Delivered::outcome, Delivered::at)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(1, Settled.RETRY_AFTER, Duration.ZERO),
                        org.assertj.core.groups.Tuple.tuple(2, Settled.ACK, Duration.ofSeconds(30)));
        Delivery<String> copy = handler.seen.get(1);
        assertThat(copy.topic()).as("named by its original's topic").isEqualTo(TOPIC);
        assertThat(copy.key()).contains("k1");
        assertThat(copy.properties()).containsEntry("trace", "t-1");
        assertThat(settle.metric("settle_durable_delays_pending", "subscription", "orders"))
                .isZero();
    }

    @Test
    void whatWasPublishedIsHandledBeforeTheClockMoves() throws Exception {
        start(
                new Scripted(delivery ->
                        delivery.attempt() == 1 ? Outcome.retryAfter(Duration.ofSeconds(1)) : Outcome.ack()),
                shared().build());

        settle.message("a").publish();
        settle.message("b").publish();
        assertThat(settle.deliveries()).isEmpty();
        settle.advance(Duration.ofSeconds(5));

        assertThat(settle.deliveries())
                .extracting(Delivered::value, Delivered::attempt, Delivered::at)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("a", 1, Duration.ZERO),
                        org.assertj.core.groups.Tuple.tuple("b", 1, Duration.ZERO),
                        org.assertj.core.groups.Tuple.tuple("a", 2, Duration.ofSeconds(1)),
                        org.assertj.core.groups.Tuple.tuple("b", 2, Duration.ofSeconds(1)));
    }

    @Test
    void aRetryAfterNotShorterThanTheAckTimeoutIsRefusedAndRetriedAtOnce() throws Exception {
        start(
                new Scripted(delivery ->
                        delivery.attempt() == 1 ? Outcome.retryAfter(Duration.ofSeconds(5)) : Outcome.ack()),
                shared().ackTimeout(Duration.ofSeconds(5)).build());

        settle.send("m");

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.REFUSED, Settled.ACK);
        assertThat(attempts(settle.deliveries())).containsExactly(1, 2);
        assertThat(settle.elapsed()).isZero();
    }

    @Test
    void aHandlerThatThrowsIsRetriedAfterTheGrowingFailureBackoffThenDeadLettered() throws Exception {
        start(
                new Scripted(delivery -> {
                    throw new IllegalStateException("downstream is down");
                }),
                shared().deadLetter(4, DLQ).build());

        settle.send("m");
        assertThat(attempts(settle.deliveries())).containsExactly(1);

        // The default backoff: 100 ms, then 200 ms, then 400 ms; the last attempt goes at once.
        settle.advance(Duration.ofMillis(99));
        assertThat(settle.deliveries()).hasSize(1);
        settle.advance(Duration.ofMillis(1));
        settle.advance(Duration.ofMillis(200));
        settle.advance(Duration.ofMillis(400));

        assertThat(settle.deliveries())
                .extracting(Delivered::at)
                .containsExactly(Duration.ZERO, Duration.ofMillis(100), Duration.ofMillis(300), Duration.ofMillis(700));
        assertThat(settle.subscription().outcomes()).containsOnly(Settled.ERROR);
        assertThat(settle.deadLetters()).hasSize(1);
    }

    @Test
    void aPayloadThatCannotBeDecodedIsAFailure() throws Exception {
        record Order(String id, int quantity) {}
        List<Order> seen = new ArrayList<>();
        Handler<Order> handler = delivery -> {
            seen.add(delivery.value());
            return Outcome.ack();
        };
        settle = SettleTestDriver.forHandler(
                handler, Order.class, shared().deadLetter(2, DLQ).build());

        settle.send(new Order("o-1", 3));
        settle.send("not json".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        settle.advance(Duration.ofSeconds(1));

        assertThat(seen).containsExactly(new Order("o-1", 3));
        assertThat(settle.subscription().outcomes()).containsExactly(Settled.ACK, Settled.ERROR, Settled.ERROR);
        assertThat(settle.deadLetters()).singleElement().satisfies(dead -> {
            assertThat(dead.text()).isEqualTo("not json");
            assertThat(dead.properties())
                    .containsEntry("settle.stage", "decode")
                    .containsEntry("settle.attempts", "2")
                    .containsKey("settle.exception.class");
        });
    }

    @Test
    void noOutcomeComesBackAfterTheAckTimeoutWithTheCountRaised() throws Exception {
        start(
                new Scripted(delivery -> null),
                shared().ackTimeout(Duration.ofSeconds(10)).deadLetter(2, DLQ).build());

        settle.send("m");
        settle.advance(Duration.ofMillis(9_999));
        assertThat(attempts(settle.deliveries())).containsExactly(1);
        settle.advance(Duration.ofMillis(1));
        assertThat(attempts(settle.deliveries())).containsExactly(1, 2);
        settle.advance(Duration.ofSeconds(10));

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.NONE, Settled.NONE);
        assertThat(settle.subscription().consumerCalls())
                .extracting(ConsumerCall::kind)
                .containsExactly(
                        ConsumerCall.Kind.ACK_TIMEOUT, ConsumerCall.Kind.ACK_TIMEOUT, ConsumerCall.Kind.DEAD_LETTERED);
        // The client's copy: Settle never learned why, and the letter says so by carrying none of its properties.
        assertThat(settle.deadLetters())
                .singleElement()
                .satisfies(
                        dead -> assertThat(dead.properties().keySet()).noneMatch(name -> name.startsWith("settle.")));
    }

    @Test
    void noOutcomeWithoutAnAckTimeoutStaysUnacknowledged() throws Exception {
        start(new Scripted(delivery -> null), shared().build());

        settle.send("m");
        settle.advance(Duration.ofDays(1));

        assertThat(settle.subscription().outcomes()).containsExactly(Settled.NONE);
        assertThat(settle.subscription().unacknowledged()).isEqualTo(1);
    }

    @Test
    void onExclusiveTheAttemptStaysOneAndANackRewindsEveryUnacknowledgedMessage() throws Exception {
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        start(
                new Scripted(delivery -> {
                    int call = calls.computeIfAbsent(delivery.value(), v -> new AtomicInteger())
                            .incrementAndGet();
                    if (delivery.value().equals("left")) {
                        return null;
                    }
                    return call == 1 ? Outcome.retry() : Outcome.ack();
                }),
                shared().type(SubscriptionKind.EXCLUSIVE).build());

        settle.send("left");
        settle.send("retried");

        assertThat(settle.deliveries())
                .extracting(Delivered::value, Delivered::attempt, Delivered::outcome)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("left", 1, Settled.NONE),
                        org.assertj.core.groups.Tuple.tuple("retried", 1, Settled.RETRY),
                        org.assertj.core.groups.Tuple.tuple("left", 1, Settled.NONE),
                        org.assertj.core.groups.Tuple.tuple("retried", 1, Settled.ACK));
    }

    @Test
    void aHandlerRetryingAtOnceForEverOnExclusiveIsStoppedWithAnExplanation() throws Exception {
        start(
                new Scripted(delivery -> Outcome.retry()),
                shared().type(SubscriptionKind.FAILOVER).build());

        assertThatThrownBy(() -> settle.send("m"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("10000 deliveries without the clock moving")
                .hasMessageContaining("Failover subscription without maxAttempts and deadLetterTopic retries for ever");
        assertThat(settle.deliveries()).hasSize(SimulatedSubscription.DELIVERIES_WITHOUT_TIME_PASSING);
        // Nothing is left counted as in flight: moving the clock returns.
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                Duration.ofSeconds(10), () -> settle.advance(Duration.ofSeconds(1)));
    }

    @Test
    void withConcurrencyMessagesOfOneKeyAreHandledInOrderWhileKeysRunInParallel() throws Exception {
        Map<String, List<String>> byKey = new ConcurrentHashMap<>();
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        Scripted handler = new Scripted(delivery -> {
            int now = running.incrementAndGet();
            mostAtOnce.accumulateAndGet(now, Math::max);
            try {
                Waits.pause(Duration.ofMillis(5), "a handler slow enough for keys to run in parallel");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            byKey.computeIfAbsent(delivery.key().orElseThrow(), k -> Collections.synchronizedList(new ArrayList<>()))
                    .add(delivery.value());
            running.decrementAndGet();
            return Outcome.ack();
        });
        start(handler, shared().type(SubscriptionKind.KEY_SHARED).concurrency(4).build());

        Map<String, List<String>> sent = new HashMap<>();
        // Published first and handed over at once, so that four calls can run at a time.
        for (int i = 0; i < 8; i++) {
            for (String key : List.of("a", "b", "c", "d")) {
                String value = key + i;
                sent.computeIfAbsent(key, k -> new ArrayList<>()).add(value);
                settle.message(value).key(key).publish();
            }
        }
        assertThat(settle.deliveries()).isEmpty();
        settle.advance(Duration.ZERO);

        assertThat(byKey).isEqualTo(sent);
        assertThat(mostAtOnce.get()).as("handler calls at once").isBetween(2, 4);
    }

    /**
     * Key-ordered retries in the kit, as the runtime runs them (on by default on Key_Shared): key K's 3rd message
     * waits twice in {@code retryAfter(2 s)}; K's 4th to 10th are handled only after it succeeds, other keys meanwhile.
     */
    @Test
    void onKeySharedARetryHoldsItsKeysLaterMessagesWhileOtherKeysGoOn() throws Exception {
        List<String> calls = keyedRunWithARetriedThirdMessage(RetryOrder.KEY);

        assertThat(calls.stream().filter(call -> call.startsWith("K")))
                .containsExactly(
                        "K1#1", "K2#1", "K3#1", "K3#2", "K3#3", "K4#1", "K5#1", "K6#1", "K7#1", "K8#1", "K9#1",
                        "K10#1");
        assertThat(calls.subList(0, calls.indexOf("K3#2")))
                .as("the other keys, all handled while K waited")
                .contains("O1#1", "O5#1", "O10#1");
        assertThat(settle.subscription().outcomes()).doesNotContain(Settled.NONE);
    }

    /** The same run with {@code order: none}: the settlement contract's default elsewhere, later messages pass. */
    @Test
    void withOrderNoneTheKeysLaterMessagesPassItsRetry() throws Exception {
        List<String> calls = keyedRunWithARetriedThirdMessage(RetryOrder.NONE);

        assertThat(calls.indexOf("K10#1")).isLessThan(calls.indexOf("K3#2"));
    }

    /** Values and attempts as the handler was called, when K3 answers retryAfter(2 s) on its first two attempts. */
    private List<String> keyedRunWithARetriedThirdMessage(RetryOrder order) throws Exception {
        Scripted handler = new Scripted(delivery -> delivery.value().equals("K3") && delivery.attempt() <= 2
                ? Outcome.retryAfter(Duration.ofSeconds(2))
                : Outcome.ack());
        start(handler, shared().type(SubscriptionKind.KEY_SHARED).order(order).build());
        for (int n = 1; n <= 10; n++) {
            settle.message("K" + n).key("K").publish();
            settle.message("O" + n).key("O" + n).publish();
        }
        settle.advance(Duration.ofSeconds(10));

        assertThat(settle.deliveries()).hasSize(22);
        return handler.seen.stream()
                .map(delivery -> delivery.value() + "#" + delivery.attempt())
                .toList();
    }

    @Test
    void aManifestIsCheckedAsSettleRunChecksItWithEveryProblemAtOnce(@TempDir Path folder) throws Exception {
        Path manifest = Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: pulsar://localhost:6650
                subscriptions:
                  - name: orders
                    topics: [orders]
                    jar: handler.jar
                    maxAttempts: 1
                    deadLetterTopic: orders-dlq
                """);

        assertThatThrownBy(() -> SettleTestDriver.fromManifest(manifest, Map.of()))
                .isInstanceOf(ManifestException.class)
                .hasMessage(
                        "%1$s:6:10: subscriptions[0].jar: no file or folder at '%2$s', was 'handler.jar'; the path is"
                                + " relative to the manifest's folder\n"
                                + "%1$s:7:18: subscriptions[0].maxAttempts: must be at least 2, was '1'; the Pulsar"
                                + " client needs maxRedeliverCount (maxAttempts - 1) above 0",
                        manifest, folder.resolve("handler.jar"));
    }

    @Test
    void aClosedDriverAbandonsHeldRetriesAndClosesTheHandler() throws Exception {
        AtomicInteger closed = new AtomicInteger();
        Handler<String> handler = new Handler<>() {
            @Override
            public Outcome handle(Delivery<String> delivery) {
                return Outcome.retryAfter(Duration.ofSeconds(1));
            }

            @Override
            public void close() {
                closed.incrementAndGet();
            }
        };
        settle = SettleTestDriver.forHandler(handler, String.class, shared().build());
        settle.send("m");

        settle.close();

        assertThat(closed).hasValue(1);
        assertThat(settle.subscription().unacknowledged()).isEqualTo(1);
        assertThat(settle.metric("settle_held_retries", "subscription", "orders"))
                .isZero();
        assertThatThrownBy(() -> settle.send("again")).isInstanceOf(IllegalStateException.class);
        assertThat(Optional.of(settle.deliveries().size())).contains(1);
    }
}
