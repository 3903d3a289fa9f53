package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.deadletter.HeldBy;
import dev.settle.runtime.deadletter.Redrive;
import dev.settle.runtime.manifest.HoldForFix;
import dev.settle.runtime.manifest.SubscriptionKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.ManualTime;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code onCap: hold} as a part: a capped message's copy goes to the held topic, tagged with the code that held it,
 * through the same letter path (in a transaction of its own at exactly-once); a re-drive's copy goes to the dead-letter
 * topic; a new generation serving every key asks for a re-drive of what other code held.
 */
class HeldForFixTest {
    private static final String HELD_TOPIC = "persistent://public/default/orders-held";
    private static final SubscriptionSpec CAPPED = SubscriptionSpec.builder(
                    "orders", List.of("persistent://public/default/orders"))
            .type(SubscriptionKind.SHARED)
            .deadLetter(3, "persistent://public/default/orders-dlq")
            .build();
    private static final Failure BOOM = new Failure(Failure.Stage.HANDLER, new IllegalStateException("boom"));
    private static final Redrive.Counts NONE = new Redrive.Counts(0, 0, 0, 0, 0);

    private final ManualTime time = new ManualTime();
    private final PendingOutputs pending = new PendingOutputs(10, time);
    private final List<String> wentTo = new CopyOnWriteArrayList<>();
    private final List<Map<String, String>> written = new CopyOnWriteArrayList<>();
    private final List<Integer> heldBy = new CopyOnWriteArrayList<>();
    private final List<HeldBy> runs = new CopyOnWriteArrayList<>();

    private final DriverMetrics metrics = new DriverMetrics() {
        @Override
        public void delivered(int attempt, long lagMillis) {}

        @Override
        public void settled(Settled how, long handlerNanos) {}

        @Override
        public void deadLettered() {}

        @Override
        public void heldChanged(int delta) {}

        @Override
        public void inFlightChanged(int delta) {}

        @Override
        public void heldForFix(int generation) {
            heldBy.add(generation);
        }
    };

    private DeadLetterWriter<Message<?>> writer(String topic) {
        return (work, properties) -> {
            wentTo.add(topic);
            written.add(properties);
            return CompletableFuture.completedFuture(null);
        };
    }

    private HeldForFix hold(HeldForFix.Runs redrive) {
        return new HeldForFix("orders", new HoldForFix(HELD_TOPIC, 100), writer("held"), redrive, metrics, time);
    }

    @AfterEach
    void stop() {
        time.close();
    }

    private static Message<?> message(Map<String, String> properties) {
        MessageId id = new MessageIdImpl(7, 3, -1);
        return (Message<?>) Proxy.newProxyInstance(
                Message.class.getClassLoader(),
                new Class<?>[] {Message.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getMessageId" -> id;
                    case "getPublishTime" -> 1_700_000_000_000L;
                    case "getProperties" -> properties;
                    case "equals" -> proxy == args[0];
                    case "hashCode" -> System.identityHashCode(proxy);
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    private static UnitOfWork<Message<?>> lastAttempt(Message<?> message) {
        UnitOfWork<Message<?>> work = new UnitOfWork<>(message, message.getMessageId(), 3, false, 0);
        work.failed(BOOM);
        return work;
    }

    private DeadLettering<Message<?>> letters(HeldForFix hold) {
        return DeadLettering.acknowledged(
                        CAPPED, writer("dead letters"), pending, DeadLettering.LetterWatch.none(), () -> "code", time)
                .holding(hold);
    }

    @Test
    void aCappedMessageGoesToTheHeldTopicTaggedWithTheCodeThatHeldItAndWhereItStood() {
        HeldForFix hold = hold(code -> NONE);
        hold.servedByAll(new HeldBy(4, "ab12"));
        List<DeadLettering.Stored> settled = new ArrayList<>();

        DeadLettering<Message<?>> letters = letters(hold);
        UnitOfWork<Message<?>> work = lastAttempt(message(Map.of("tenant", "acme")));
        boolean held = letters.goes(work);
        letters.write(work, BOOM, settled::add);

        assertThat(held).isTrue();
        assertThat(wentTo).containsExactly("held");
        assertThat(written.get(0))
                .containsEntry(DeadLetterProperties.STAGE, "handler")
                .containsEntry(DeadLetterProperties.EXCEPTION_CLASS, "java.lang.IllegalStateException")
                .containsEntry(DeadLetterProperties.ATTEMPTS, "3")
                .containsEntry(DeadLetterProperties.HELD_GENERATION, "4")
                .containsEntry(DeadLetterProperties.HELD_SHA256, "ab12")
                .containsEntry(DeadLetterProperties.HELD_PUBLISH_TIME, "1700000000000")
                .containsEntry(DeadLetterProperties.HELD_POSITION, "7:3:-1");
        assertThat(settled)
                .as("the original is acknowledged once its held copy is stored")
                .containsExactly(DeadLettering.Stored.STORED);
        assertThat(heldBy).containsExactly(4);
    }

    @Test
    void aRedrivenCopyThatFailsAgainGoesToTheDeadLetterTopicNeverToTheHeldOne() {
        DeadLettering<Message<?>> letters = letters(hold(code -> NONE));
        UnitOfWork<Message<?>> work = lastAttempt(message(Map.of(DeadLetterProperties.HELD_GENERATION, "1")));

        boolean held = letters.goes(work);
        letters.write(work, BOOM, stored -> {});

        assertThat(held).isFalse();
        assertThat(wentTo).containsExactly("dead letters");
        assertThat(heldBy).isEmpty();
    }

    @Test
    void onCapDeadLetterSendsEveryLetterToTheDeadLetterTopic() {
        DeadLettering<Message<?>> letters = DeadLettering.acknowledged(
                        CAPPED, writer("dead letters"), pending, DeadLettering.LetterWatch.none(), () -> "code", time)
                .holding(OnCap.deadLetter());
        UnitOfWork<Message<?>> work = lastAttempt(message(Map.of()));

        boolean held = letters.goes(work);
        letters.write(work, BOOM, stored -> {});

        assertThat(held).isFalse();
        assertThat(wentTo).containsExactly("dead letters");
        assertThat(written.get(0)).doesNotContainKey(DeadLetterProperties.HELD_GENERATION);
    }

    @Test
    void exactlyOnceTheHeldCopyIsCommittedWithItsOriginalsAcknowledgement() {
        List<String> calls = new ArrayList<>();
        DeadLettering.LetterCommits<Message<?>> commits = (work, write) -> {
            calls.add("begin");
            return write.apply(work);
        };
        List<DeadLettering.Stored> settled = new ArrayList<>();
        DeadLettering<Message<?>> letters = DeadLettering.committed(
                        CAPPED,
                        writer("dead letters"),
                        commits,
                        pending,
                        DeadLettering.LetterWatch.none(),
                        () -> "code",
                        time)
                .holding(hold(code -> NONE));

        letters.write(lastAttempt(message(Map.of())), BOOM, settled::add);

        assertThat(calls).containsExactly("begin");
        assertThat(wentTo).containsExactly("held");
        assertThat(settled).containsExactly(DeadLettering.Stored.COMMITTED);
    }

    @Test
    void aGenerationServingEveryKeyAsksForARedriveOfWhatOtherCodeHeld() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        HeldForFix hold = hold(code -> {
            runs.add(code);
            ran.countDown();
            return new Redrive.Counts(50, 0, 0, 0, 0);
        });

        hold.servedByAll(new HeldBy(2, "bb22"));

        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(runs).containsExactly(new HeldBy(2, "bb22"));
        hold.close();
    }

    @Test
    void aRedriveTheBrokerRefusedIsTriedAgainAfterItsPause() throws Exception {
        CountDownLatch second = new CountDownLatch(1);
        HeldForFix hold = hold(code -> {
            runs.add(code);
            if (runs.size() == 1) {
                throw new IllegalStateException("ConsumerBusy: another replica re-drives");
            }
            second.countDown();
            return new Redrive.Counts(1, 0, 0, 0, 0);
        });

        hold.servedByAll(new HeldBy(2, "bb22"));
        // The retry waits on the manual clock: moved past the pause once the failed try's wait has begun.
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> time.waiting() == 1);
        time.advance(HeldForFix.RUN_RETRY);

        assertThat(second.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(runs).hasSize(2);
        hold.close();
    }
}
