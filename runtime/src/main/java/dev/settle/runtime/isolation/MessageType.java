package dev.settle.runtime.isolation;

import dev.settle.sdk.Handler;
import java.lang.reflect.Array;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Reads the {@code T} a handler class fixes for {@code Handler<T>}, through any chain of generic superclasses
 * and interfaces: {@code class A extends Base<Order>} with {@code abstract class Base<X> implements Handler<X>}
 * resolves to {@code Order}.
 *
 * <p>The result is a class the driver can decode into: {@code String}, {@code byte[]}, or another class, loaded by
 * the handler's loader. A parameterized argument resolves to its raw class ({@code Map<String, Object>} to
 * {@code Map}), as JSON decoding works on the raw class anyway.
 */
final class MessageType {

    /** The resolved class, or a description of what stood in its place. */
    record Resolution(Optional<Class<?>> type, String found) {}

    /** Marks a supertype used raw ({@code implements Handler}): everything above it is erased. */
    private record RawUse(Class<?> type) implements Type {}

    private MessageType() {}

    static Resolution of(Class<?> handlerClass) {
        return of(handlerClass, Handler.class, 0);
    }

    /**
     * The {@code index}th type argument {@code type} fixes for the generic interface {@code target}: a Pulsar
     * Function's input (0) and output (1).
     */
    static Resolution of(Class<?> implementation, Class<?> target, int index) {
        return resolve(handlerArgument(implementation, target, index, Map.of()));
    }

    /** The Functions API's output record, which this package never links against. */
    private static final String RECORD = "org.apache.pulsar.functions.api.Record";

    /**
     * As {@link #of(Class, Class, int)}, where a {@code CompletableFuture<T>} (any {@code CompletionStage}) stands
     * for the {@code T} it completes with (a function that answers later publishes the {@code T}), and a
     * {@code Record<T>} for its {@code T} (a function returning {@code context.newOutputRecordBuilder(...)} records
     * publishes their {@code T} values), both at once too.
     */
    static Resolution completedValue(Class<?> implementation, Class<?> target, int index) {
        Type argument = handlerArgument(implementation, target, index, Map.of());
        for (int unwrapped = 0; unwrapped < 2; unwrapped++) {
            if (argument instanceof ParameterizedType parameterized
                    && parameterized.getRawType() instanceof Class<?> raw
                    && (CompletionStage.class.isAssignableFrom(raw)
                            || raw.getName().equals(RECORD))) {
                argument = parameterized.getActualTypeArguments()[0];
            }
        }
        return resolve(argument);
    }

    /**
     * The element type of the {@code index}th type argument of {@code target} when it is a {@code Collection<E>}
     * with {@code E} resolved: what a {@code java.util.function.Function<Collection<E>, O>} is windowed over.
     */
    static Optional<Class<?>> collectionElement(Class<?> implementation, Class<?> target, int index) {
        Type argument = handlerArgument(implementation, target, index, Map.of());
        if (argument instanceof ParameterizedType parameterized
                && parameterized.getRawType() instanceof Class<?> raw
                && java.util.Collection.class.isAssignableFrom(raw)) {
            return resolve(parameterized.getActualTypeArguments()[0]).type();
        }
        return Optional.empty();
    }

    private static Resolution resolve(Type argument) {
        if (argument instanceof RawUse raw) {
            return new Resolution(Optional.empty(), "the raw type " + raw.type().getName());
        }
        Optional<Class<?>> type = rawClass(argument);
        if (type.isPresent()) {
            return new Resolution(type, type.get().getTypeName());
        }
        if (argument instanceof TypeVariable<?> variable) {
            return new Resolution(Optional.empty(), "the type variable " + variable.getName());
        }
        return new Resolution(Optional.empty(), argument.getTypeName());
    }

    /**
     * The argument of {@code Handler} reachable from {@code type}, with {@code bindings} mapping the type's own
     * variables to what its subclass fixed; a {@link RawUse} where the way up to {@code Handler} is raw.
     */
    private static Type handlerArgument(
            Class<?> type, Class<?> target, int index, Map<TypeVariable<?>, Type> bindings) {
        for (Type parent : parentsOf(type)) {
            Class<?> raw = rawClass(parent).orElse(null);
            if (raw == null || !target.isAssignableFrom(raw)) {
                continue;
            }
            if (!(parent instanceof ParameterizedType parameterized)) {
                if (raw.getTypeParameters().length > 0) {
                    // Used raw: everything above it is erased, Handler's argument included.
                    return new RawUse(raw);
                }
                // Not generic itself (interface OrderEvents extends Handler<Order>): look above it.
                return handlerArgument(raw, target, index, Map.of());
            }
            Type[] arguments = parameterized.getActualTypeArguments();
            if (raw == target) {
                return substitute(arguments[index], bindings);
            }
            TypeVariable<?>[] variables = raw.getTypeParameters();
            Map<TypeVariable<?>, Type> next = new HashMap<>();
            for (int i = 0; i < variables.length; i++) {
                next.put(variables[i], substitute(arguments[i], bindings));
            }
            return handlerArgument(raw, target, index, next);
        }
        // Only reached for Handler itself, which the loader has already ruled out.
        return new RawUse(target);
    }

    private static Type[] parentsOf(Class<?> type) {
        Type[] interfaces = type.getGenericInterfaces();
        Type superclass = type.getGenericSuperclass();
        if (superclass == null) {
            return interfaces;
        }
        Type[] parents = new Type[interfaces.length + 1];
        System.arraycopy(interfaces, 0, parents, 0, interfaces.length);
        parents[interfaces.length] = superclass;
        return parents;
    }

    private static Type substitute(Type type, Map<TypeVariable<?>, Type> bindings) {
        if (type instanceof TypeVariable<?> variable && bindings.containsKey(variable)) {
            return bindings.get(variable);
        }
        return type;
    }

    private static Optional<Class<?>> rawClass(Type type) {
        if (type instanceof Class<?> c) {
            return Optional.of(c);
        }
        if (type instanceof ParameterizedType parameterized) {
            return rawClass(parameterized.getRawType());
        }
        if (type instanceof GenericArrayType array) {
            return rawClass(array.getGenericComponentType())
                    .map(component -> Array.newInstance(component, 0).getClass());
        }
        return Optional.empty();
    }
}
