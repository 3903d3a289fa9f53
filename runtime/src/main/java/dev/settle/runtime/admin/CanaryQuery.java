package dev.settle.runtime.admin;

import dev.settle.runtime.manifest.UntrustedText;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the query of a canary request ({@code ?steps=5,25,100&stepEvery=60s&minCalls=...}). Every value comes from
 * the caller: a bad one is an {@link IllegalArgumentException} naming the parameter and the value, shortened and
 * escaped ({@link UntrustedText}), which the server answers with 400.
 */
final class CanaryQuery {
    private CanaryQuery() {}

    /** "5,25,100" as whole percents; the ramp checks their order. */
    static List<Integer> steps(String text) {
        List<Integer> steps = new ArrayList<>();
        for (String step : text.split(",", -1)) {
            String plain = step.strip().replace("%", "");
            if (!plain.matches("[0-9]{1,3}")) {
                throw new IllegalArgumentException(
                        "steps must be whole percents such as 5,25,100, was '" + UntrustedText.escape(text, 100) + "'");
            }
            steps.add(Integer.parseInt(plain));
        }
        return steps;
    }

    static double number(Map<String, String> query, String name, double fallback) {
        String text = query.get(name);
        if (text == null) {
            return fallback;
        }
        try {
            return Double.parseDouble(text.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    name + " must be a number, was '" + UntrustedText.escape(text, 100) + "'");
        }
    }

    /** The query of a request target, each name's last value, percent-decoded. */
    static Map<String, String> query(String target) {
        Map<String, String> query = new LinkedHashMap<>();
        int at = target.indexOf('?');
        if (at < 0) {
            return query;
        }
        for (String pair : target.substring(at + 1).split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int equals = pair.indexOf('=');
            String name = equals < 0 ? pair : pair.substring(0, equals);
            String value = equals < 0 ? "" : pair.substring(equals + 1);
            query.put(
                    URLDecoder.decode(name, StandardCharsets.UTF_8), URLDecoder.decode(value, StandardCharsets.UTF_8));
        }
        return query;
    }
}
