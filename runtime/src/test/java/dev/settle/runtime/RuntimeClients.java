package dev.settle.runtime;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pulsar.client.impl.PulsarClientImpl;

/**
 * The Pulsar clients an in-process runtime holds (its own and its transactions'), found by walking its object graph:
 * a test that drops their connections, as a keep-alive timeout does, reaches them without the runtime exposing them.
 * Only Settle's own objects and the JDK's collections are walked, never into the clients themselves.
 */
final class RuntimeClients {
    private RuntimeClients() {}

    static List<PulsarClientImpl> of(Object root) throws IllegalAccessException {
        Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        // A LinkedList: fields and arrays hold nulls.
        Deque<Object> left = new LinkedList<>(List.of(root));
        List<PulsarClientImpl> found = new ArrayList<>();
        while (!left.isEmpty()) {
            Object next = left.pop();
            if (next == null || !seen.add(next)) {
                continue;
            }
            if (next instanceof PulsarClientImpl client) {
                found.add(client);
            } else if (next instanceof Map<?, ?> map) {
                left.addAll(copy(map.values()));
            } else if (next instanceof Collection<?> collection) {
                left.addAll(copy(collection));
            } else if (next instanceof Optional<?> optional) {
                optional.ifPresent(left::push);
            } else if (next instanceof AtomicReference<?> reference) {
                left.push(reference.get());
            } else if (next instanceof java.util.concurrent.CompletableFuture<?> future) {
                if (future.isDone() && !future.isCompletedExceptionally()) {
                    left.push(future.join());
                }
            } else if (next.getClass().isArray()
                    && !next.getClass().getComponentType().isPrimitive()) {
                for (int i = 0; i < Array.getLength(next); i++) {
                    left.push(Array.get(next, i));
                }
            } else if (next.getClass().getName().startsWith("dev.settle.")) {
                // Settle's own classes' fields only: the JDK's are closed to reflection.
                for (Class<?> type = next.getClass();
                        type != null && type.getName().startsWith("dev.settle.");
                        type = type.getSuperclass()) {
                    for (Field field : type.getDeclaredFields()) {
                        if (!Modifier.isStatic(field.getModifiers())
                                && !field.getType().isPrimitive()) {
                            field.setAccessible(true);
                            left.push(field.get(next));
                        }
                    }
                }
            }
        }
        return found;
    }

    /** Its elements but nulls; none when it changed while being copied (the next walk sees it). */
    private static List<Object> copy(Collection<?> collection) {
        try {
            List<Object> elements = new ArrayList<>(collection);
            elements.removeIf(java.util.Objects::isNull);
            return elements;
        } catch (RuntimeException changing) {
            return List.of();
        }
    }
}
