package dev.settle.runtime.publish;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.testbroker.PulsarFixture;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.common.schema.SchemaInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Messages made before their topic's producer exists are sent, once it does, from Settle's own thread
 * ({@code settle-deferred-sends}), never from the client's network thread that completes the creation: a send there
 * that blocks for queue room ({@code blockIfQueueFull}) would wait for that very thread and stop the whole client.
 * Where a message is encoded shows where it is sent: the schema encodes it as the real builder is given its value.
 */
class DeferredSendsIT {
    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @Test
    void messagesWaitingForANewProducerAreSentOffTheClientsNetworkThread() throws Exception {
        ThreadRecordingSchema schema = new ThreadRecordingSchema();
        String topic = pulsar.topic("deferred-sends");
        PulsarClient client = pulsar.client();
        try (PulsarOutputs outputs =
                // Nothing is prepared, so nothing is retried on the timer.
                new PulsarOutputs(
                        () -> client,
                        "deferred test",
                        ProducerSettings.FUNCTIONS_DEFAULT,
                        new dev.settle.runtime.time.ManualTime())) {
            List<CompletableFuture<MessageId>> sends = new ArrayList<>();
            // The first message asks for the producer; it and the next ones wait for it to exist.
            for (int i = 0; i < 5; i++) {
                sends.add(outputs.newMessage(topic, schema).value("m" + i).sendAsync());
            }
            CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
        }
        // The first message waits for the producer for sure; a later one made once it exists goes straight to it,
        // from this thread.
        assertThat(schema.encodedOn).hasSize(5);
        assertThat(schema.encodedOn.get(0))
                .as("the thread the first message was encoded and sent on")
                .isEqualTo("settle-deferred-sends");
        assertThat(schema.encodedOn)
                .allSatisfy(thread -> assertThat(thread)
                        .isIn("settle-deferred-sends", Thread.currentThread().getName()));
    }

    /** UTF-8 strings, noting the thread each is encoded on. */
    private static final class ThreadRecordingSchema implements Schema<String> {
        final List<String> encodedOn = new CopyOnWriteArrayList<>();

        @Override
        public byte[] encode(String message) {
            encodedOn.add(Thread.currentThread().getName());
            return message.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String decode(byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }

        @Override
        public SchemaInfo getSchemaInfo() {
            return Schema.STRING.getSchemaInfo();
        }

        @Override
        public Schema<String> clone() {
            return this;
        }
    }
}
