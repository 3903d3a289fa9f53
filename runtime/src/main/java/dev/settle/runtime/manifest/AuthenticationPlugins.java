package dev.settle.runtime.manifest;

import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

/**
 * Whether an {@code authPlugin} names a class the Pulsar client can use, checked when the manifest is loaded so
 * that {@code settle validate} refuses a typo instead of the client failing at start.
 *
 * <p>The manifest knows nothing of Pulsar's types (the layering test holds it to that), so the contract is named,
 * not imported: the class must implement the interface called {@link #CONTRACT}, found by walking its supertypes
 * by name. The class is loaded, never initialised, by the loader that carries the runtime and its Pulsar client:
 * the one the client itself loads the plugin from.
 */
final class AuthenticationPlugins {
    static final String CONTRACT = "org.apache.pulsar.client.api.Authentication";
    private static final String EXAMPLES = "such as org.apache.pulsar.client.impl.auth.AuthenticationToken or"
            + " org.apache.pulsar.client.impl.auth.AuthenticationTls";

    private AuthenticationPlugins() {}

    /** Empty when {@code className} is usable, or what is wrong with it and what to do. */
    static Optional<String> check(String className) {
        Class<?> type;
        try {
            type = Class.forName(className, false, AuthenticationPlugins.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return Optional.of("no class '" + className + "' on the runtime's class path; name an " + CONTRACT
                    + " implementation " + EXAMPLES + ", or put the JAR that holds it on the runtime's class path");
        }
        if (!implementsContract(type)) {
            return Optional.of("'" + className + "' does not implement " + CONTRACT + "; name an authentication plugin "
                    + EXAMPLES);
        }
        if (type.isInterface() || Modifier.isAbstract(type.getModifiers())) {
            return Optional.of("'" + className + "' is an interface or an abstract class; name a concrete class"
                    + " that implements it");
        }
        try {
            if (!Modifier.isPublic(type.getConstructor().getModifiers())) {
                throw new NoSuchMethodException();
            }
        } catch (NoSuchMethodException | LinkageError e) {
            return Optional.of("'" + className + "' has no public constructor without parameters, which the Pulsar"
                    + " client needs to create it; give it one, or name another plugin");
        }
        return Optional.empty();
    }

    private static boolean implementsContract(Class<?> type) {
        Deque<Class<?>> pending = new ArrayDeque<>();
        Set<Class<?>> seen = new HashSet<>();
        pending.add(type);
        while (!pending.isEmpty()) {
            Class<?> next = pending.pop();
            if (!seen.add(next)) {
                continue;
            }
            if (next.getName().equals(CONTRACT)) {
                return true;
            }
            if (next.getSuperclass() != null) {
                pending.add(next.getSuperclass());
            }
            pending.addAll(java.util.List.of(next.getInterfaces()));
        }
        return false;
    }
}
