package dev.settle.runtime.deployment;

import dev.settle.runtime.isolation.FunctionJarScan;
import dev.settle.runtime.isolation.LoadedFunction;
import dev.settle.runtime.manifest.ExceptionRule;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.Problem;
import dev.settle.runtime.manifest.SchemaKind;
import dev.settle.runtime.manifest.SubscriptionSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * What a loaded function (or handler) must satisfy beyond loading: no call of a {@code Context} method Settle
 * cannot serve in the function's own class (one in a class it only reaches is a warning), schemas that fit its types, and {@code onException} types that exist and are throwables.
 */
final class FunctionChecks {
    private FunctionChecks() {}

    static List<Problem> of(Manifest manifest, int index, SubscriptionSpec spec, LoadedFunction function) {
        List<Problem> problems = new ArrayList<>();
        String path = "subscriptions[" + index + "].function";
        for (FunctionJarScan.Reference call : function.unsupportedCalls()) {
            if (!call.certain()) {
                continue; // only reachable: validate warns (cli.EffectiveSettings), the runtime throws if it happens
            }
            if (spec.function().state().isPresent() && FunctionJarScan.STATE.contains(call.method())) {
                continue; // served from the state topic
            }
            problems.add(new Problem(
                    manifest.locate(path),
                    path,
                    function.jar().getFileName() + " calls Context." + call.method() + " (in "
                            + String.join(", ", call.callers()) + "), which Settle does not support: "
                            + call.advice()));
        }
        window(manifest, index, spec, function, problems);
        // A windowed function's inputs are the window's elements.
        Class<?> input = spec.function().window().isPresent()
                ? function.windowInput().orElse(function.inputType())
                : function.inputType();
        spec.function()
                .inputSerdes()
                .forEach((topic, serde) -> serde(
                        manifest,
                        "subscriptions[" + index + "].inputSerdes",
                        serde,
                        input,
                        function,
                        problems,
                        "for " + topic + ": "));
        spec.function()
                .outputSerde()
                .ifPresent(serde -> serde(
                        manifest,
                        "subscriptions[" + index + "].outputSerde",
                        serde,
                        function.outputType(),
                        function,
                        problems,
                        ""));
        fit(manifest, index, "schema", spec.handler().schema(), input, function, problems);
        fit(manifest, index, "outputSchema", spec.function().outputSchema(), function.outputType(), function, problems);
        problems.addAll(exceptionTypes(manifest, index, spec, function.classLoader()));
        return problems;
    }

    /**
     * A {@code WindowFunction} needs {@code windowConfig} (Functions refuses it without: "Window Configs cannot be
     * found"), and {@code windowConfig} needs a function that takes a window.
     */
    private static void window(
            Manifest manifest, int index, SubscriptionSpec spec, LoadedFunction function, List<Problem> problems) {
        if (function.windowFunction() && spec.function().window().isEmpty()) {
            String path = "subscriptions[" + index + "].function";
            problems.add(new Problem(
                    manifest.locate(path),
                    path,
                    function.className() + " is a WindowFunction, which is called with windows of messages; add"
                            + " windowConfig with windowLengthCount or windowLengthDurationMs"));
        } else if (spec.function().window().isPresent()
                && function.windowInput().isEmpty()) {
            String path = "subscriptions[" + index + "].windowConfig";
            problems.add(new Problem(
                    manifest.locate(path),
                    path,
                    "is set for " + function.className() + ", which takes "
                            + function.inputType().getTypeName()
                            + ", not a window; a windowed function implements WindowFunction<I, O> or"
                            + " java.util.function.Function<Collection<I>, O>. Remove windowConfig, or name such a"
                            + " function"));
        }
    }

    private static void fit(
            Manifest manifest,
            int index,
            String key,
            java.util.Optional<SchemaKind> declared,
            Class<?> type,
            LoadedFunction function,
            List<Problem> problems) {
        declared.filter(kind -> !kind.fits(type)).ifPresent(kind -> {
            String path = "subscriptions[" + index + "]." + key;
            problems.add(new Problem(
                    manifest.locate(path),
                    path,
                    "'" + kind.manifestName() + "' does not fit function " + function.className() + ", whose type"
                            + " there is " + type.getTypeName() + "; the schemas that fit are "
                            + String.join(
                                    ", ",
                                    SchemaKind.fitting(type).stream()
                                            .map(SchemaKind::manifestName)
                                            .toList())
                            + ", or leave " + key + " out"));
        });
    }

    /**
     * A SerDe must be a public class of the function's JAR implementing {@code org.apache.pulsar.functions.api.SerDe},
     * with a public no-argument constructor, and of the function's type where its class says so.
     */
    private static void serde(
            Manifest manifest,
            String path,
            String className,
            Class<?> type,
            LoadedFunction function,
            List<Problem> problems,
            String prefix) {
        String jar = function.jar().getFileName().toString();
        Class<?> serde;
        Class<?> serdeInterface;
        try {
            serdeInterface = Class.forName(SERDE, false, function.classLoader());
            serde = Class.forName(className, false, function.classLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            problems.add(new Problem(
                    manifest.locate(path),
                    path,
                    prefix + "no class '" + className + "' in " + jar
                            + "; name a class of the function's JAR that implements " + SERDE));
            return;
        }
        String problem = null;
        if (!serdeInterface.isAssignableFrom(serde)) {
            problem = "'" + className + "' in " + jar + " does not implement " + SERDE + "; name a SerDe class";
        } else if (serde.isInterface()
                || java.lang.reflect.Modifier.isAbstract(serde.getModifiers())
                || !java.lang.reflect.Modifier.isPublic(serde.getModifiers())) {
            problem = "'" + className + "' in " + jar + " is not a public concrete class, so it cannot be created";
        } else {
            try {
                serde.getConstructor();
            } catch (NoSuchMethodException | LinkageError e) {
                problem = "'" + className + "' in " + jar + " has no public no-argument constructor; add one";
            }
        }
        if (problem == null) {
            Class<?> serialises = serialisedType(serde, serdeInterface);
            if (serialises != null
                    && !box(type).isAssignableFrom(serialises)
                    && !serialises.isAssignableFrom(box(type))) {
                problem = "'" + className + "' serialises " + serialises.getTypeName() + ", but function "
                        + function.className() + " has " + type.getTypeName() + " there; name a SerDe of "
                        + type.getTypeName();
            }
        }
        if (problem != null) {
            problems.add(new Problem(manifest.locate(path), path, prefix + problem));
        }
    }

    private static final String SERDE = "org.apache.pulsar.functions.api.SerDe";

    /** The {@code T} of a class declaring {@code implements SerDe<T>} with a class for it, else null. */
    private static Class<?> serialisedType(Class<?> serde, Class<?> serdeInterface) {
        for (Class<?> c = serde; c != null; c = c.getSuperclass()) {
            for (java.lang.reflect.Type declared : c.getGenericInterfaces()) {
                if (declared instanceof java.lang.reflect.ParameterizedType parameterized
                        && parameterized.getRawType() == serdeInterface
                        && parameterized.getActualTypeArguments()[0] instanceof Class<?> argument) {
                    return argument;
                }
            }
        }
        return null;
    }

    private static Class<?> box(Class<?> type) {
        return type.isPrimitive()
                ? java.lang.invoke.MethodType.methodType(type).wrap().returnType()
                : type;
    }

    /** Each {@code onException} type must be a {@link Throwable} the handler's JAR or the JDK has. */
    static List<Problem> exceptionTypes(Manifest manifest, int index, SubscriptionSpec spec, ClassLoader loader) {
        List<Problem> problems = new ArrayList<>();
        List<ExceptionRule> rules = spec.onException();
        for (int i = 0; i < rules.size(); i++) {
            String type = rules.get(i).type();
            String path = "subscriptions[" + index + "].onException[" + i + "].type";
            try {
                Class<?> found = Class.forName(type, false, loader);
                if (!Throwable.class.isAssignableFrom(found)) {
                    problems.add(new Problem(
                            manifest.locate(path),
                            path,
                            "'" + type + "' is not an exception (not a java.lang.Throwable); name an exception class"));
                }
            } catch (ClassNotFoundException | LinkageError e) {
                problems.add(new Problem(
                        manifest.locate(path),
                        path,
                        "no class '" + type + "' in " + spec.handler().jar().getFileName()
                                + " or the JDK; write the exception's full class name, such as"
                                + " java.net.ConnectException"));
            }
        }
        return problems;
    }
}
