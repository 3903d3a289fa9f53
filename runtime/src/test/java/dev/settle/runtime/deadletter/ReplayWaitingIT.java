package dev.settle.runtime.deadletter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.manifest.HoldForFix;
import dev.settle.testbroker.PulsarFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.Consumer;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.SubscriptionType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code settle held list|show} and {@code settle dlq list|show} read through the subscription a re-drive or a replay
 * holds Exclusive while it runs ({@link Replay#waiting}). A runtime's re-drive holds it for the seconds of a pass at
 * each start and swap: a listing at that moment waits for it instead of failing with "Exclusive consumer is already
 * connected" (HoldForFixIT failed once so in a full build), and gives up with a clear reason when the run goes on.
 */
class ReplayWaitingIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @Test
    void aListingWaitsWhileARunHoldsTheSubscriptionThenReadsEveryMessage() throws Exception {
        String held = heldTopicWith(3);
        try (Consumer<byte[]> run = holdsTheRedrive(held)) {
            long started = System.nanoTime();
            CompletableFuture<List<String>> listing = CompletableFuture.supplyAsync(() -> {
                try (Replay.Waiting waiting = Replay.waiting(pulsar.client(), held, HoldForFix.REDRIVE_SUBSCRIPTION)) {
                    List<String> read = new ArrayList<>();
                    for (Message<byte[]> message = waiting.next(); message != null; message = waiting.next()) {
                        read.add(new String(message.getData()));
                    }
                    return read;
                } catch (PulsarClientException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(listing).as("waits while the run holds the subscription").isNotDone();
            // Deliberate: the run's own length, what the listing must wait out (there is no condition to wait on).
            Thread.sleep(1_500);
            assertThat(listing).as("still waiting after 1.5 s").isNotDone();
            run.close();

            assertThat(listing.get(30, TimeUnit.SECONDS)).containsExactly("held-0", "held-1", "held-2");
            double seconds = (System.nanoTime() - started) / 1e9;
            System.out.printf(
                    "listing read 3 held messages %.2f s after it began (the run held them 1.5 s)%n", seconds);
            assertThat(seconds).isGreaterThanOrEqualTo(1.5);
        }
    }

    @Test
    void aRunThatGoesOnIsNamedWithWhatToDo() throws Exception {
        String held = heldTopicWith(1);
        try (Consumer<byte[]> run = holdsTheRedrive(held)) {
            long started = System.nanoTime();
            assertThatThrownBy(() -> Replay.waiting(
                            pulsar.client(), held, HoldForFix.REDRIVE_SUBSCRIPTION, Duration.ofSeconds(2)))
                    .isInstanceOf(PulsarClientException.ConsumerBusyException.class)
                    .hasMessageContaining("'" + HoldForFix.REDRIVE_SUBSCRIPTION + "' of " + held)
                    .hasMessageContaining("for all of 2 s")
                    .hasMessageContaining("run the command again when that run has ended");
            double seconds = (System.nanoTime() - started) / 1e9;
            assertThat(seconds).as("gave up after its 2 s, not at once").isBetween(2.0, 20.0);
            assertThat(run.isConnected()).as("the run kept its subscription").isTrue();
        }
    }

    private String heldTopicWith(int messages) throws Exception {
        String held = pulsar.topic("busy") + "-held";
        pulsar.admin().topics().createNonPartitionedTopic(held);
        pulsar.admin().topics().createSubscription(held, HoldForFix.REDRIVE_SUBSCRIPTION, MessageId.earliest);
        try (Producer<byte[]> producer =
                pulsar.client().newProducer(Schema.BYTES).topic(held).create()) {
            for (int i = 0; i < messages; i++) {
                producer.send(("held-" + i).getBytes());
            }
        }
        return held;
    }

    /** A re-drive's run as the runtime makes it: the subscription, Exclusive, held until closed. */
    private Consumer<byte[]> holdsTheRedrive(String held) throws PulsarClientException {
        return pulsar.client()
                .newConsumer(Schema.BYTES)
                .topic(held)
                .subscriptionName(HoldForFix.REDRIVE_SUBSCRIPTION)
                .subscriptionType(SubscriptionType.Exclusive)
                .subscribe();
    }
}
