package dev.settle.runtime.driver;

import java.lang.reflect.Proxy;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.transaction.Transaction;

/** For tests in other packages: a delivery of an exactly-once subscription, in a transaction as its call sees it. */
public final class ExactlyOnceFixtures {
    private ExactlyOnceFixtures() {}

    /** {@code message}'s delivery at {@code attempt}, in a transaction that answers nothing (a port only reads it). */
    public static UnitOfWork<Message<?>> inTransaction(Message<?> message, int attempt) {
        UnitOfWork<Message<?>> work = new UnitOfWork<>(message, message.getMessageId(), attempt, false, 0);
        work.inTransaction((Transaction) Proxy.newProxyInstance(
                Transaction.class.getClassLoader(), new Class<?>[] {Transaction.class}, (proxy, method, args) -> {
                    throw new UnsupportedOperationException(method.getName());
                }));
        return work;
    }
}
