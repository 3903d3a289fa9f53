package dev.settle.runtime.driver;

import org.apache.pulsar.client.api.Message;

/** For the journal's tests, in another package: a delivery whose failure is recorded, as the settlement records it. */
public final class JournalFixtures {
    private JournalFixtures() {}

    /** {@code message}'s delivery at {@code attempt}, failed in the handler with {@code cause}. */
    public static UnitOfWork<Message<?>> failed(Message<?> message, int attempt, Throwable cause) {
        UnitOfWork<Message<?>> work = new UnitOfWork<>(message, message.getMessageId(), attempt, false, 0);
        work.failed(new Failure(Failure.Stage.HANDLER, cause));
        return work;
    }
}
