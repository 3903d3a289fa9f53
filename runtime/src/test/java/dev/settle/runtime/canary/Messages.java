package dev.settle.runtime.canary;

import dev.settle.runtime.driver.UnitOfWork;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import org.apache.pulsar.client.api.Message;
import org.apache.pulsar.client.api.MessageId;

/** Messages of a key, or of none, as the router reads them: key, ordering key and id only. */
final class Messages {
    private Messages() {}

    static Message<?> keyed(String key) {
        return message(key, MessageId.earliest);
    }

    static Message<?> message(String key, MessageId id) {
        return (Message<?>) Proxy.newProxyInstance(
                Message.class.getClassLoader(),
                new Class<?>[] {Message.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "hasKey" -> key != null;
                    case "getKey" -> key;
                    case "getKeyBytes" -> key == null ? null : key.getBytes(StandardCharsets.UTF_8);
                    case "hasOrderingKey" -> false;
                    case "getOrderingKey" -> null;
                    case "getMessageId" -> id;
                    case "getRedeliveryCount" -> 0;
                    case "toString" -> "message of key " + key;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    static UnitOfWork<Message<?>> work(Message<?> message) {
        return new UnitOfWork<>(message, message.getMessageId(), 1, false, 0);
    }
}
