package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.canary.GenerationRouter;
import dev.settle.runtime.canary.Judge;
import dev.settle.runtime.canary.KeySlice;
import dev.settle.runtime.canary.MovedMessages;
import dev.settle.runtime.canary.Outcomes;
import dev.settle.runtime.canary.Thresholds;
import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.UnitOfWork;
import dev.settle.runtime.time.ManualTime;
import dev.settle.sdk.Outcome;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

/**
 * A ramp's ticks on {@link ManualTime}: calls through the router, each side's counts judged, and what the ramp does
 * then (the decision {@code LiveSubscription.tick} carries out).
 */
class RampDecisionTest {
    private final ManualTime time = new ManualTime(0, 1_764_928_800_000L);
    private final Outcomes currentCounts = new Outcomes();
    private final Outcomes canaryCounts = new Outcomes();

    /** A generation's port failing {@code failing} of every 100 calls, each call taking {@code millis}. */
    private HandlerPort port(int failing, long millis) {
        int[] calls = {0};
        return new HandlerPort() {
            @Override
            public Schema<?> schema() {
                return Schema.STRING;
            }

            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                time.advance(Duration.ofMillis(millis));
                return calls[0]++ % 100 < failing
                        ? CompletableFuture.failedFuture(new IllegalStateException("bug"))
                        : CompletableFuture.completedFuture(Outcome.ack());
            }
        };
    }

    private static Message<?> keyed(String key) {
        return (Message<?>) Proxy.newProxyInstance(
                Message.class.getClassLoader(),
                new Class<?>[] {Message.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "hasKey" -> true;
                    case "getKeyBytes" -> key.getBytes(StandardCharsets.UTF_8);
                    case "hasOrderingKey" -> false;
                    case "getMessageId" -> MessageId.earliest;
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** Sends {@code count} messages over 1 000 keys through the router, as the driver would. */
    private void send(GenerationRouter router, int count) throws Exception {
        for (int i = 0; i < count; i++) {
            Message<?> message = keyed("key-" + (i % 1_000));
            router.handle(new UnitOfWork<>(message, message.getMessageId(), 1, false, time.nanoTime()))
                    .toCompletableFuture()
                    .join();
        }
    }

    private Ramp ramp() {
        return Ramp.start(4, List.of(5, 25, 100), Duration.ofSeconds(60), time.instant(), Thresholds.DEFAULTS);
    }

    private Judge.Judgement judged(Ramp ramp) {
        return Judge.judge(canaryCounts.snapshot(), currentCounts.snapshot(), ramp.thresholds());
    }

    private GenerationRouter router(HandlerPort canary, int percent) {
        return new GenerationRouter(
                new GenerationRouter.Side(port(0, 2), 1, currentCounts),
                new GenerationRouter.Side(canary, 2, canaryCounts),
                KeySlice.of(percent),
                time,
                "router",
                new MovedMessages());
    }

    @Test
    void aCanaryFailingThirtyPercentIsRolledBackAtTheFirstTickWithEnoughCallsBeforeItsStepIsDue() throws Exception {
        Ramp ramp = ramp();
        GenerationRouter router = router(port(30, 2), 5);
        send(router, 2_000);
        // About 100 canary calls: not judged, nothing changes.
        assertThat(judged(ramp).verdict()).isEqualTo(Judge.Verdict.NOT_ENOUGH_CALLS);
        assertThat(ramp.decide(judged(ramp), time.instant())).isEqualTo(Ramp.Decision.STAY);
        send(router, 4_000);
        Judge.Judgement enough = judged(ramp);
        assertThat(enough.verdict()).isEqualTo(Judge.Verdict.REGRESSED);
        assertThat(enough.why()).startsWith("failure rate 3").contains("against 0.0%");
        // 6 000 calls of 2 ms: 12 s in, long before the 60 s step is due.
        assertThat(ramp.stepDue(time.instant())).isFalse();
        assertThat(ramp.decide(enough, time.instant())).isEqualTo(Ramp.Decision.ROLL_BACK);
    }

    @Test
    void aHealthyCanaryAdvancesOnlyOnceItsStepIsDueAndIsPromotedFromTheLastStep() throws Exception {
        Ramp ramp = ramp();
        send(router(port(0, 2), 5), 6_000);
        assertThat(judged(ramp).verdict()).isEqualTo(Judge.Verdict.HEALTHY);
        assertThat(ramp.decide(judged(ramp), time.instant())).isEqualTo(Ramp.Decision.STAY);
        time.advance(Duration.ofSeconds(48));
        assertThat(ramp.decide(judged(ramp), time.instant())).isEqualTo(Ramp.Decision.ADVANCE);
        Ramp at25 = ramp.atStep(ramp.nextPercent(), time.instant());
        assertThat(at25.percent()).isEqualTo(25);
        time.advance(Duration.ofSeconds(60));
        assertThat(at25.decide(judged(ramp), time.instant())).isEqualTo(Ramp.Decision.PROMOTE);
    }

    @Test
    void aStepWithTooFewCallsDoesNotAdvanceHoweverLongItRan() throws Exception {
        Ramp ramp = ramp();
        send(router(port(0, 2), 5), 1_000);
        time.advance(Duration.ofHours(1));
        assertThat(judged(ramp).verdict()).isEqualTo(Judge.Verdict.NOT_ENOUGH_CALLS);
        assertThat(ramp.decide(judged(ramp), time.instant())).isEqualTo(Ramp.Decision.STAY);
    }

    @Test
    void aSlowCanaryIsRolledBackOnItsP99() throws Exception {
        Ramp ramp = ramp();
        send(router(port(0, 200), 5), 6_000);
        Judge.Judgement judged = judged(ramp);
        assertThat(judged.why()).startsWith("p99 handling time");
        assertThat(ramp.decide(judged, time.instant())).isEqualTo(Ramp.Decision.ROLL_BACK);
    }
}
