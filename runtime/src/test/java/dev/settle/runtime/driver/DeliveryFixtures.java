package dev.settle.runtime.driver;

import java.lang.reflect.Proxy;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.transaction.Transaction;

/** For tests in other packages: deliveries as a port sees them, and what a port told of them. */
public final class DeliveryFixtures {
    private DeliveryFixtures() {}

    /** {@code message}'s delivery at {@code attempt}, in a transaction that answers nothing (a port only reads it). */
    public static UnitOfWork<Message<?>> inTransaction(Message<?> message, int attempt) {
        UnitOfWork<Message<?>> work = new UnitOfWork<>(message, message.getMessageId(), attempt, false, 0);
        work.inTransaction((Transaction) Proxy.newProxyInstance(
                Transaction.class.getClassLoader(), new Class<?>[] {Transaction.class}, (proxy, method, args) -> {
                    throw new UnsupportedOperationException(method.getName());
                }));
        return work;
    }

    /** The generation a port named as handling {@code work} ({@link UnitOfWork#handledBy}); 0 when none did. */
    public static int generationOf(UnitOfWork<?> work) {
        return work.generation();
    }
}
