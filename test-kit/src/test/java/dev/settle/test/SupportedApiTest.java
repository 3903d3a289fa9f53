package dev.settle.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Executable;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The supported API is marked where it is declared (docs/design.md, "The supported API"): every public type of the
 * kit, and every runtime type the kit's public members take, return or throw, says <b>Supported API</b> in its
 * javadoc; nothing else of the runtime does, so a handler author can tell what stays stable.
 */
class SupportedApiTest {
    private static final String MARK = "<b>Supported API</b>";
    private static final Path KIT = Path.of("src", "main", "java");
    private static final Path RUNTIME = Path.of("..", "runtime", "src", "main", "java");

    @Test
    void everyPublicTypeOfTheKitIsMarkedSupported() throws Exception {
        for (Class<?> type : kitTypes()) {
            assertThat(source(KIT, type)).as("%s's javadoc", type.getName()).contains(MARK);
        }
    }

    @Test
    void everyRuntimeTypeTheKitTakesReturnsOrThrowsIsMarkedSupportedAndNoOtherIs() throws Exception {
        Set<String> reached = new TreeSet<>();
        for (Class<?> type : kitTypes()) {
            List<Executable> members = new ArrayList<>(List.of(type.getConstructors()));
            members.addAll(List.of(type.getMethods()));
            for (Executable member : members) {
                if (member.getDeclaringClass() != type) {
                    continue;
                }
                for (Type parameter : member.getGenericParameterTypes()) {
                    collect(parameter, reached);
                }
                for (Type thrown : member.getGenericExceptionTypes()) {
                    collect(thrown, reached);
                }
                if (member instanceof Method method) {
                    collect(method.getGenericReturnType(), reached);
                }
            }
        }
        assertThat(reached).isNotEmpty();
        List<String> unmarked = new ArrayList<>();
        for (String name : reached) {
            if (!source(RUNTIME, Class.forName(name)).contains(MARK)) {
                unmarked.add(name);
            }
        }
        assertThat(unmarked)
                .as("runtime types the kit's API reaches, not marked supported")
                .isEmpty();
        try (Stream<Path> sources = Files.walk(RUNTIME)) {
            List<String> marked = sources.filter(path -> path.toString().endsWith(".java")
                            && !path.getFileName().toString().equals("package-info.java"))
                    .filter(path -> read(path).contains(MARK))
                    .map(path -> RUNTIME.relativize(path)
                            .toString()
                            .replace('/', '.')
                            .replaceAll("\\.java$", ""))
                    .sorted()
                    .toList();
            assertThat(marked).as("runtime types marked supported").containsExactlyElementsOf(reached);
        }
    }

    /** The kit's public top-level types (nested ones are their owner's). */
    private static List<Class<?>> kitTypes() throws IOException, ClassNotFoundException {
        List<Class<?>> types = new ArrayList<>();
        try (Stream<Path> sources = Files.list(KIT.resolve(Path.of("dev", "settle", "test")))) {
            for (Path path : sources.sorted().toList()) {
                String name = path.getFileName().toString().replaceAll("\\.java$", "");
                if (name.equals("package-info")) {
                    continue;
                }
                Class<?> type = Class.forName("dev.settle.test." + name);
                if (Modifier.isPublic(type.getModifiers())) {
                    types.add(type);
                }
            }
        }
        assertThat(types).contains(SettleTestDriver.class, TestSubscription.class);
        return types;
    }

    /** Adds the runtime's top-level types in {@code type}, with its type arguments. */
    private static void collect(Type type, Set<String> into) {
        if (type instanceof Class<?> plain) {
            Class<?> outer = plain.isArray() ? plain.getComponentType() : plain;
            while (outer.getEnclosingClass() != null) {
                outer = outer.getEnclosingClass();
            }
            if (outer.getName().startsWith("dev.settle.runtime.")) {
                into.add(outer.getName());
            }
        } else if (type instanceof ParameterizedType parameterized) {
            collect(parameterized.getRawType(), into);
            for (Type argument : parameterized.getActualTypeArguments()) {
                collect(argument, into);
            }
        } else if (type instanceof GenericArrayType array) {
            collect(array.getGenericComponentType(), into);
        } else if (type instanceof WildcardType wildcard) {
            Stream.of(wildcard.getUpperBounds()).forEach(bound -> collect(bound, into));
        }
    }

    private static String source(Path root, Class<?> type) {
        return read(root.resolve(type.getName().replace('.', '/') + ".java"));
    }

    private static String read(Path path) {
        try {
            return Files.readString(path);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
