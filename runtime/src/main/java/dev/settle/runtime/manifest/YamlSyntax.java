package dev.settle.runtime.manifest;

import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * A YAML syntax error in plain words, at the place to fix it. SnakeYAML names its parser's states ("while parsing a
 * block mapping, expected &lt;block end&gt;, but found '&lt;block mapping start&gt;'"); a person needs to hear that
 * a line is indented wrongly, that a list or a quote is not closed, or that a tab is in the indentation.
 */
final class YamlSyntax {
    /** Where to point, and what to say. */
    record Explained(Mark mark, String message) {}

    private YamlSyntax() {}

    static Explained explain(MarkedYAMLException e) {
        String context = e.getContext() == null ? "" : e.getContext();
        String problem = e.getProblem() == null ? "" : e.getProblem();
        Mark at = e.getProblemMark();
        Mark opened = e.getContextMark() != null ? e.getContextMark() : at;
        if (problem.contains("cannot start any token") && problem.contains("TAB")) {
            return new Explained(at, "a tab in the indentation: YAML indents with spaces only; replace the tabs");
        }
        if (context.startsWith("while scanning a quoted scalar")) {
            return new Explained(
                    opened, "this quoted value is never closed: end it with the same quote, on the same line");
        }
        if (context.startsWith("while parsing a flow sequence")) {
            return new Explained(
                    opened,
                    "this '[' list is not closed where the line ends: end it with ']', or write one '- item' a line");
        }
        if (context.startsWith("while parsing a flow mapping")) {
            return new Explained(opened, "this '{' mapping is not closed: end it with '}'");
        }
        if (problem.startsWith("expected <block end>")) {
            return new Explained(
                    at,
                    "this line is indented differently from the lines above it in the same block: line it up with"
                            + " the keys it belongs with (the same number of spaces), or indent it under its key");
        }
        if (problem.startsWith("mapping values are not allowed here")) {
            return new Explained(
                    at,
                    "a ':' that YAML cannot place: the line above may lack the ':' after its key, or this value holds"
                            + " ': ' and must be quoted (greeting: \"hello: world\")");
        }
        if (context.startsWith("while scanning a simple key") || problem.startsWith("could not find expected ':'")) {
            return new Explained(
                    opened,
                    "this line is neither 'key: value' nor '- item': add ': ' after the key, or quote the text");
        }
        if (problem.startsWith("found undefined alias")) {
            return new Explained(
                    at, "an alias (*name) with no anchor (&name) before it: define the anchor first, or quote the '*'");
        }
        return new Explained(
                at,
                "not valid YAML here: " + (context.isEmpty() ? "" : context + ", ") + problem
                        + "; check the indentation (spaces only) and the quotes on this line and the one above");
    }
}
