package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.driver.HandlerPort;
import dev.settle.runtime.driver.SdkHandlerPort;
import dev.settle.runtime.driver.UnitOfWork;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.Handler;
import dev.settle.sdk.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

class CurrentGenerationTest {

    private static HandlerPort port(Schema<?> schema) {
        return new HandlerPort() {
            @Override
            public Schema<?> schema() {
                return schema;
            }

            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                return CompletableFuture.completedFuture(Outcome.ack());
            }
        };
    }

    private static Generation generation(int number, HandlerPort port) {
        return new Generation(
                new GenerationRecord(number, "sha" + number, "Handler", GenerationRecord.Source.UPLOAD, Instant.EPOCH),
                null,
                port,
                null);
    }

    @Test
    void aGenerationNamesItsPortWhateverTheKindABatchHandlersGatheringToo() {
        HandlerPort gathering = new HandlerPort() {
            @Override
            public Schema<?> schema() {
                return Schema.BYTES;
            }

            @Override
            public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) {
                return CompletableFuture.completedFuture(Outcome.ack());
            }

            @Override
            public HandlerPort named(String name) {
                HandlerPort unnamed = this;
                return new HandlerPort() {
                    @Override
                    public Schema<?> schema() {
                        return unnamed.schema();
                    }

                    @Override
                    public CompletionStage<Outcome> handle(UnitOfWork<Message<?>> work) throws Exception {
                        return unnamed.handle(work);
                    }

                    @Override
                    public String toString() {
                        return name;
                    }
                };
            }
        };

        // The journal reads a settlement's generation from the port's name: a batch handler's showed generation 0.
        assertThat(generation(3, gathering).port.toString()).isEqualTo("Handler (generation 3, sha256 sha3)");
    }

    @Test
    void theConsumersSchemaStaysTheFirstGenerationsAcrossSwaps() throws Exception {
        CurrentGeneration code = new CurrentGeneration(generation(1, port(Schema.BYTES)));

        CurrentGeneration.Swap swap = code.swap(generation(2, port(Schema.STRING)), Duration.ofSeconds(1));

        assertThat(code.consumerSchema()).isSameAs(Schema.BYTES);
        assertThat(code.current().record.number()).isEqualTo(2);
        assertThat(swap.retired().record.number()).isEqualTo(1);
        // Before a driver runs it, nothing can be in flight.
        assertThat(swap.drained()).isTrue();
        assertThat(CurrentGeneration.awaitIdle(swap, Duration.ZERO)).isTrue();
    }

    @Test
    void aGenerationsPortNamesTheGenerationAndItsShaInLogsAndDeadLetters() {
        Handler<String> handler = delivery -> Outcome.ack();
        SubscriptionSpec spec =
                SubscriptionSpec.builder("orders", List.of("orders")).build();

        Generation generation = generation(2, SdkHandlerPort.of(handler, String.class, spec));

        // The failure log and the dead letter's settle.code name the port that ran the call: two generations may
        // run one class.
        assertThat(generation.port).hasToString("Handler (generation 2, sha256 sha2)");
    }
}
