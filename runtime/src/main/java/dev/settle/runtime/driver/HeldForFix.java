package dev.settle.runtime.driver;

import dev.settle.runtime.deadletter.DeadLetterProperties;
import dev.settle.runtime.deadletter.HeldBy;
import dev.settle.runtime.deadletter.Redrive;
import dev.settle.runtime.deadletter.ReplayRules;
import dev.settle.runtime.manifest.Guarantee;
import dev.settle.runtime.manifest.HoldForFix;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.Time;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageIdAdv;
import org.apache.pulsar.client.api.PulsarClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code onCap: hold} (docs/dead-letters.md, "Hold for a fix"): a message that exhausts its attempts goes to the held
 * topic, tagged with the generation of the code that runs ({@link HeldBy}), instead of the dead-letter topic; when
 * another generation serves every key ({@link #servedByAll}), the messages other code held go back to their topic
 * ({@link Redrive}, on a thread of its own, one run at a time). A re-drive's copy that the new code fails too is never
 * held again: it goes to the dead-letter topic with both causes ({@link DeadLetterProperties#isRedriven}), and a
 * re-drive leaves what the running code held (the loop guard), so nothing goes round. Thread-safe.
 */
final class HeldForFix implements OnCap<Message<?>> {
    private static final Logger log = LoggerFactory.getLogger(HeldForFix.class);
    /** A re-drive the broker refused (unreachable, or another replica's run holds the subscription) is tried again. */
    static final int RUN_TRIES = 5;

    static final Duration RUN_RETRY = Duration.ofSeconds(2);

    /** The timeout of a re-drive's transaction (exactly-once): one copy's send, acknowledgement and commit. */
    static final Duration REDRIVE_TRANSACTION_TIMEOUT = Duration.ofMinutes(1);

    /** What sends held messages back: the real {@link Redrive}, or a test's. */
    interface Runs {
        /** Sends back what {@code code} did not hold; what went where. */
        Redrive.Counts redrive(HeldBy code) throws Exception;
    }

    private final String subscription;
    private final String topic;
    private final DeadLetterWriter<Message<?>> writer;
    private final Runs runs;
    private final DriverMetrics metrics;
    private final Time time;
    /** The code that holds messages now; told by {@link #servedByAll}. */
    private volatile HeldBy code = HeldBy.UNKNOWN;

    private final ThreadPoolExecutor redrives;
    /** Whether a run is asked for and not yet begun: requests while one runs make one more run, not one each. */
    private final AtomicBoolean asked = new AtomicBoolean();

    private volatile boolean closed;

    /**
     * {@code onCap: hold} of {@code spec}: held copies written through {@code writer}, re-driven by a {@link Redrive}
     * of {@code client} to the subscription's own topics only, at {@code held}'s rate; at {@code guarantee:
     * exactly-once} each copy sent back and acknowledged in one transaction of {@code transactions}.
     *
     * @param transactions the subscription's transactions; null at at-least-once
     */
    static HeldForFix of(
            PulsarClient client,
            SubscriptionSpec spec,
            HoldForFix held,
            DeadLetterWriter<Message<?>> writer,
            Transactions transactions,
            DriverMetrics metrics,
            Time time) {
        Redrive atLeastOnce = new Redrive(
                client,
                held.topic(),
                // The dead-letter and held topics are Settle's: never a re-drive's target.
                new ReplayRules.Targets(
                        spec.name(),
                        spec.topics(),
                        List.of(spec.deadLetter().get().topic(), held.topic())),
                held.redrivePerSecond());
        Redrive redrive = spec.guarantee() == Guarantee.EXACTLY_ONCE
                ? atLeastOnce.inTransactions(() -> transactions.begin(REDRIVE_TRANSACTION_TIMEOUT))
                : atLeastOnce;
        Redrive.Report report = (copy, decision) -> {
            if (decision.action() == Redrive.Action.REFUSED) {
                log.warn(
                        "subscription '{}': held message {} is not sent back: {}; it stays in {}",
                        spec.name(),
                        copy.getMessageId(),
                        decision.why(),
                        held.topic());
            }
        };
        return new HeldForFix(
                spec.name(), held, writer, code -> redrive.run(other -> !code.sameCode(other), report), metrics, time);
    }

    HeldForFix(
            String subscription,
            HoldForFix settings,
            DeadLetterWriter<Message<?>> writer,
            Runs runs,
            DriverMetrics metrics,
            Time time) {
        this.subscription = subscription;
        this.topic = settings.topic();
        this.writer = writer;
        this.runs = runs;
        this.metrics = metrics;
        this.time = time;
        this.redrives = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>(), task -> {
            Thread thread = new Thread(task, "settle-" + subscription + "-redrive");
            thread.setDaemon(true);
            return thread;
        });
        this.redrives.allowCoreThreadTimeOut(true);
    }

    /** A copy that a re-drive sent back is never held again: its dead letter carries both causes. */
    @Override
    public boolean holds(UnitOfWork<Message<?>> work) {
        return !DeadLetterProperties.isRedriven(work.message().getProperties());
    }

    @Override
    public String topic() {
        return topic;
    }

    @Override
    public Map<String, String> tags(UnitOfWork<Message<?>> work) {
        Message<?> message = work.message();
        Map<String, String> tags = new HashMap<>(code.properties());
        // Where the original stood, so a re-drive sends each key's messages in their order (Redrive.inKeyOrder).
        tags.put(DeadLetterProperties.HELD_PUBLISH_TIME, Long.toString(message.getPublishTime()));
        if (message.getMessageId() instanceof MessageIdAdv position) {
            tags.put(
                    DeadLetterProperties.HELD_POSITION,
                    position.getLedgerId() + ":" + position.getEntryId() + ":" + position.getBatchIndex());
        }
        return tags;
    }

    @Override
    public DeadLetterWriter<Message<?>> writer() {
        return writer;
    }

    @Override
    public void held(UnitOfWork<Message<?>> work) {
        metrics.heldForFix(code.generation());
    }

    @Override
    public void servedByAll(HeldBy next) {
        code = next;
        if (closed || !asked.compareAndSet(false, true)) {
            return;
        }
        try {
            redrives.execute(this::redrive);
        } catch (RejectedExecutionException stopping) {
            asked.set(false);
        }
    }

    private void redrive() {
        asked.set(false);
        HeldBy now = code;
        for (int tries = 1; tries <= RUN_TRIES && !closed; tries++) {
            try {
                Redrive.Counts counts = runs.redrive(now);
                metrics.redriven(counts.redriven());
                log.info(
                        "subscription '{}': {} serves every key: {} held messages of other code sent back to their"
                                + " topic from {}; {} held by this code wait for another generation, {} refused (not"
                                + " a topic of the subscription), {} whose payload does not fit their topic's schema"
                                + " left there",
                        subscription,
                        now,
                        counts.redriven(),
                        topic,
                        counts.sameCode(),
                        counts.refused(),
                        counts.unfit());
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                log.warn(
                        "subscription '{}': the re-drive of {} failed (try {} of {}){}; what was sent back is"
                                + " acknowledged, the rest waits in the held topic",
                        subscription,
                        topic,
                        tries,
                        RUN_TRIES,
                        tries < RUN_TRIES
                                ? ", trying again in " + RUN_RETRY.toSeconds() + " s"
                                : "; it runs again with the next generation, or run settle held drain",
                        PrintableThrowable.of(e));
                try {
                    // Waits on the stop as the condition: the pause between tries is the retry's own.
                    time.await(() -> closed, RUN_RETRY);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    @Override
    public String describe() {
        return "held for a fix in " + topic + ", re-driven when another generation serves every key";
    }

    @Override
    public void close() {
        closed = true;
        redrives.shutdownNow();
    }
}
