package dev.settle.runtime.manifest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Expands {@code ${NAME}} and {@code ${NAME:-default}} in one manifest value; {@code $${} is a literal
 * {@code ${}. As in a shell, the default is used when the variable is unset or empty.
 *
 * <p>Substitution happens in each scalar value after the YAML is parsed, not in the text before: a variable
 * cannot change the document's structure (a value holding {@code "\n  evil: key"} stays one string), and every
 * problem keeps the line and column the user wrote.
 */
final class EnvironmentSubstitution {
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /**
     * The expanded value.
     *
     * @param text the value after substitution
     * @param substituted whether any part of it came from the environment (or a default written with it)
     * @param problems what could not be expanded, each completing "path: ..."
     */
    record Result(String text, boolean substituted, List<String> problems) {}

    private EnvironmentSubstitution() {}

    static Result apply(String text, Map<String, String> environment) {
        if (text.indexOf('$') < 0) {
            return new Result(text, false, List.of());
        }
        StringBuilder out = new StringBuilder(text.length());
        List<String> problems = new ArrayList<>();
        boolean substituted = false;
        int i = 0;
        while (i < text.length()) {
            if (text.startsWith("$${", i)) {
                out.append("${");
                i += 3;
            } else if (text.startsWith("${", i)) {
                int close = text.indexOf('}', i + 2);
                if (close < 0) {
                    problems.add("has '${' without a closing '}', was '" + text + "'; write '$${' for a literal '${'");
                    return new Result(text, substituted, problems);
                }
                String reference = text.substring(i + 2, close);
                int colon = reference.indexOf(":-");
                String name = colon < 0 ? reference : reference.substring(0, colon);
                if (!NAME.matcher(name).matches()) {
                    problems.add("'${" + reference + "}' is not a variable reference; write ${NAME} or"
                            + " ${NAME:-default}, or '$${' for a literal '${'");
                } else {
                    String value = environment.get(name);
                    if (colon >= 0 && (value == null || value.isEmpty())) {
                        value = reference.substring(colon + 2);
                    }
                    if (value == null) {
                        problems.add("environment variable '" + name + "' is not set; set it, or give a default"
                                + " with '${" + name + ":-value}'");
                    } else {
                        out.append(value);
                    }
                }
                substituted = true;
                i = close + 1;
            } else {
                out.append(text.charAt(i));
                i++;
            }
        }
        return new Result(out.toString(), substituted, problems);
    }
}
