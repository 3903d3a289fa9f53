package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.time.ManualTime;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A dead letter being written is a pending send of its subscription, so maxPendingOutputs bounds letters too. */
class PendingLettersTest {
    private final ManualTime time = new ManualTime();
    private final PendingOutputs pending = new PendingOutputs(1, time);
    private final CompletableFuture<Void> stored = new CompletableFuture<>();

    @AfterEach
    void stopTimer() {
        time.close();
    }

    @Test
    void aLetterHoldsTheReceiverAtTheBoundUntilItIsStored() throws Exception {
        PendingLetters<Message<?>> letters = new PendingLetters<>((work, properties) -> stored, pending);

        CompletionStage<?> written = letters.write(work(), Map.of());

        assertThat(pending.sends()).isEqualTo(1);
        assertThat(pending.awaitRoom(() -> true))
                .as("no room at maxPendingOutputs 1")
                .isFalse();
        stored.complete(null);
        assertThat(written.toCompletableFuture()).isCompleted();
        assertThat(pending.sends()).isZero();
        assertThat(pending.awaitRoom(() -> true)).isTrue();
    }

    @Test
    void aLetterNotStoredOrAWriterThatThrowsGivesItsRoomBack() {
        PendingLetters<Message<?>> refused = new PendingLetters<>((work, properties) -> stored, pending);
        refused.write(work(), Map.of());
        stored.completeExceptionally(new IllegalStateException("topic fenced"));
        assertThat(pending.sends()).isZero();

        PendingLetters<Message<?>> throwing = new PendingLetters<>(
                (work, properties) -> {
                    throw new IllegalStateException("producer closed");
                },
                pending);
        assertThat(throwing.write(work(), Map.of()).toCompletableFuture()).isCompletedExceptionally();
        assertThat(pending.sends()).isZero();
        assertThat(pending.deliveries()).isZero();
    }

    @Test
    void itAcknowledgesTheOriginalWhenItsWriterDoes() {
        DeadLetterWriter<Message<?>> committing = new DeadLetterWriter<>() {
            @Override
            public CompletionStage<?> write(UnitOfWork<Message<?>> work, Map<String, String> properties) {
                return stored;
            }

            @Override
            public boolean acknowledgesOriginal() {
                return true;
            }
        };

        assertThat(new PendingLetters<>(committing, pending).acknowledgesOriginal())
                .isTrue();
        assertThat(new PendingLetters<Message<?>>((work, properties) -> stored, pending).acknowledgesOriginal())
                .isFalse();
    }

    private UnitOfWork<Message<?>> work() {
        return new UnitOfWork<>(
                UnitOfWorkTest.message(MessageId.earliest), MessageId.earliest, 3, false, time.nanoTime());
    }
}
