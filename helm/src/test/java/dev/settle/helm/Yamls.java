package dev.settle.helm;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Typed steps through parsed YAML, failing with the path that was not there. */
final class Yamls {
    private Yamls() {}

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object value, String what) {
        if (value instanceof Map<?, ?> map) {
            return (Map<String, Object>) map;
        }
        throw new AssertionError(what + " is not a mapping: " + value);
    }

    static List<Object> list(Object value, String what) {
        if (value instanceof List<?> list) {
            return new ArrayList<>(list);
        }
        throw new AssertionError(what + " is not a list: " + value);
    }

    /** The mapping at {@code path} below {@code root}. */
    static Map<String, Object> at(Map<String, Object> root, String... path) {
        Map<String, Object> current = root;
        StringBuilder where = new StringBuilder();
        for (String key : path) {
            where.append(where.length() == 0 ? "" : ".").append(key);
            current = map(current.get(key), where.toString());
        }
        return current;
    }

    /** Every string anywhere below {@code value}, keys and values. */
    static List<String> strings(Object value) {
        List<String> found = new ArrayList<>();
        collect(value, found);
        return found;
    }

    private static void collect(Object value, List<String> found) {
        if (value instanceof Map<?, ?> map) {
            map.forEach((key, child) -> {
                collect(key, found);
                collect(child, found);
            });
        } else if (value instanceof List<?> list) {
            list.forEach(child -> collect(child, found));
        } else if (value instanceof String string) {
            found.add(string);
        }
    }
}
