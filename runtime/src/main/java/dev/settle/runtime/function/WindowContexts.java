package dev.settle.runtime.function;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import org.apache.pulsar.functions.api.Context;
import org.apache.pulsar.functions.api.WindowContext;

/**
 * The {@code WindowContext} a {@code WindowFunction} is called with: every method of it is a {@code Context} method
 * of the same name and parameters (Functions' {@code WindowContextImpl} delegates the same way), so each call goes to
 * the window's {@link FunctionContext}, which publishes into the window's outputs and serves state, secrets and user
 * config as for any call. A proxy rather than a class, so a method the API adds to {@code WindowContext} later is
 * served as {@code Context} serves it.
 */
final class WindowContexts {
    private WindowContexts() {}

    static WindowContext of(Context context) {
        return (WindowContext) Proxy.newProxyInstance(
                WindowContext.class.getClassLoader(), new Class<?>[] {WindowContext.class}, (proxy, method, args) -> {
                    Method target = Context.class.getMethod(method.getName(), method.getParameterTypes());
                    try {
                        return target.invoke(context, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
