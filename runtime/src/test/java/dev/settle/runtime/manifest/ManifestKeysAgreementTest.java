package dev.settle.runtime.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.ManifestKey.Level;
import dev.settle.runtime.manifest.ManifestKey.ValueType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The key table ({@link ManifestKeys}), the JSON schema ({@code settle-manifest.schema.json}) and {@code
 * docs/manifest.md}'s key tables say the same of every key: its name, type, default and allowed values (and, where a
 * table states them, its bounds). Editing one of the three alone fails here, naming the key and what differs.
 */
class ManifestKeysAgreementTest {
    private static final Map<String, Object> SCHEMA = readSchema();

    /** Where each level's keys are in the schema. */
    private static final Map<Level, String[]> SCHEMA_AT = Map.ofEntries(
            Map.entry(Level.ROOT, new String[] {}),
            Map.entry(Level.PULSAR, new String[] {"$defs", "pulsar"}),
            Map.entry(Level.AUTHENTICATION, new String[] {"$defs", "pulsar", "properties", "authentication"}),
            Map.entry(
                    Level.PULSAR_TOKEN,
                    new String[] {"$defs", "pulsar", "properties", "authentication", "properties", "token"}),
            Map.entry(
                    Level.OAUTH2,
                    new String[] {"$defs", "pulsar", "properties", "authentication", "properties", "oauth2"}),
            Map.entry(
                    Level.CLIENT_CERTIFICATE,
                    new String[] {"$defs", "pulsar", "properties", "authentication", "properties", "tls"}),
            Map.entry(Level.TLS, new String[] {"$defs", "pulsar", "properties", "tls"}),
            Map.entry(Level.HTTP, new String[] {"$defs", "http"}),
            Map.entry(Level.STARTUP, new String[] {"properties", "startup"}),
            Map.entry(Level.SHUTDOWN, new String[] {"properties", "shutdown"}),
            Map.entry(Level.ADMIN, new String[] {"$defs", "admin"}),
            Map.entry(Level.ADMIN_TOKEN, new String[] {"$defs", "admin", "properties", "token"}),
            Map.entry(Level.SUBSCRIPTION, new String[] {"$defs", "subscription"}),
            Map.entry(Level.FAILURE_BACKOFF, new String[] {"$defs", "subscription", "properties", "failureBackoff"}),
            Map.entry(Level.OUTPUT, new String[] {"$defs", "subscription", "properties", "output"}),
            Map.entry(Level.COMMIT_BATCH, new String[] {"$defs", "subscription", "properties", "commitBatch"}),
            Map.entry(Level.BREAKER, new String[] {"$defs", "subscription", "properties", "breaker"}),
            Map.entry(Level.BATCH, new String[] {"$defs", "subscription", "properties", "batch"}),
            Map.entry(Level.WINDOW, new String[] {"$defs", "subscription", "properties", "windowConfig"}),
            Map.entry(Level.EXCEPTION_RULE, new String[] {"$defs", "subscription", "properties", "onException", "items"
            }));

    /** docs/manifest.md's sections, each with the levels its table covers (nested keys by their relative path). */
    private static final Map<String, List<Level>> DOC_SECTIONS = docSections();

    private static Map<String, List<Level>> docSections() {
        Map<String, List<Level>> sections = new LinkedHashMap<>();
        sections.put("Top level", List.of(Level.ROOT));
        sections.put(
                "`pulsar`",
                List.of(
                        Level.PULSAR,
                        Level.AUTHENTICATION,
                        Level.PULSAR_TOKEN,
                        Level.OAUTH2,
                        Level.CLIENT_CERTIFICATE,
                        Level.TLS));
        sections.put("`http`", List.of(Level.HTTP));
        sections.put("`startup`", List.of(Level.STARTUP));
        sections.put("`shutdown`", List.of(Level.SHUTDOWN));
        sections.put("`admin`", List.of(Level.ADMIN, Level.ADMIN_TOKEN));
        sections.put(
                "`subscriptions[i]`",
                List.of(
                        Level.SUBSCRIPTION,
                        Level.FAILURE_BACKOFF,
                        Level.OUTPUT,
                        Level.COMMIT_BATCH,
                        Level.BREAKER,
                        Level.BATCH,
                        Level.WINDOW,
                        Level.EXCEPTION_RULE));
        return sections;
    }

    @Test
    void theSchemaHasEachKeyOfTheTableWithItsTypeDefaultAndAllowedValues() {
        List<String> problems = new ArrayList<>();
        for (ManifestKey key : ManifestKeys.all()) {
            Map<String, Object> level = objectOption(resolve(at(SCHEMA_AT.get(key.level()))));
            Map<String, Object> properties = map(level.get("properties"));
            if (key.type() == ValueType.REFUSED) {
                if (properties.containsKey(key.name())) {
                    problems.add(key.path() + ": refused by the reader, but offered by the schema");
                }
                continue;
            }
            if (!properties.containsKey(key.name())) {
                problems.add(key.path() + ": missing from the schema");
                continue;
            }
            Map<String, Object> property = map(properties.get(key.name()));
            problems.addAll(schemaType(key, property));
            Object schemaDefault = property.get("default");
            Optional<Object> tableDefault = key.defaultValue().map(value -> typed(key.type(), value));
            if (!tableDefault.equals(Optional.ofNullable(schemaDefault).map(ManifestKeysAgreementTest::normal))) {
                problems.add(key.path() + ": default is "
                        + tableDefault.map(String::valueOf).orElse("none") + " in the table, "
                        + (schemaDefault == null ? "none" : schemaDefault) + " in the schema");
            }
        }
        assertThat(problems).isEmpty();
    }

    /** The schema's properties at each level are the table's, so a key added to the schema alone fails too. */
    @Test
    void theSchemaHasNoKeyTheTableLacks() {
        List<String> problems = new ArrayList<>();
        for (Map.Entry<Level, String[]> entry : SCHEMA_AT.entrySet()) {
            Map<String, Object> level = objectOption(resolve(at(entry.getValue())));
            for (String name : map(level.get("properties")).keySet()) {
                if (entry.getKey().names().stream().noneMatch(name::equals)) {
                    problems.add(entry.getKey().path() + "." + name + ": in the schema, not in the table");
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    private static List<String> schemaType(ManifestKey key, Map<String, Object> property) {
        List<String> problems = new ArrayList<>();
        Map<String, Object> shape = resolve(property);
        List<Map<String, Object>> options = new ArrayList<>();
        options.add(shape);
        if (shape.get("anyOf") instanceof List<?> anyOf) {
            anyOf.forEach(option -> options.add(resolve(map(option))));
        }
        String wanted = switch (key.type()) {
            case STRING, PATH, CLASS_NAME -> "string";
            case TOPIC -> "$ref:topic";
            case TOPICS, LIST -> "array";
            case INTEGER -> "integer";
            case NUMBER -> "number";
            case BOOLEAN -> "boolean";
            case DURATION, DURATION_OR_ZERO -> "$ref:duration";
            case SIZE -> "integer";
            case ENUM -> "enum";
            case MAPPING, SECRET_SOURCE, MAPPING_OR_NONE, TOPIC_OR_MAPPING, STRING_OR_MAPPING -> "object";
            case BOOLEAN_OR_TOPIC -> "boolean";
            case REFUSED -> throw new IllegalArgumentException(key.path());
        };
        boolean found = false;
        for (Map<String, Object> option : options) {
            if (wanted.startsWith("$ref:")) {
                found |= ("#/$defs/" + wanted.substring(5)).equals(property.get("$ref"))
                        || (property.get("anyOf") instanceof List<?> anyOf
                                && anyOf.stream()
                                        .anyMatch(o -> ("#/$defs/" + wanted.substring(5)).equals(map(o).get("$ref"))));
            } else if (wanted.equals("enum")) {
                found |= key.allowed().equals(option.get("enum"));
            } else if (types(option).contains(wanted)) {
                found = true;
                problems.addAll(bound(key, "minimum", key.min(), option));
                problems.addAll(bound(key, "maximum", key.max(), option));
            }
        }
        if (!found) {
            problems.add(key.path() + ": the schema does not hold it as " + key.type()
                    + (key.type() == ValueType.ENUM ? " of " + key.allowed() : "") + ": " + property);
        }
        return problems;
    }

    private static List<String> bound(
            ManifestKey key, String keyword, Optional<ManifestKey.Bound> bound, Map<String, Object> option) {
        if (key.type() != ValueType.INTEGER && key.type() != ValueType.NUMBER) {
            return List.of();
        }
        Object schema = option.get(keyword);
        Optional<Double> table = bound.map(b -> Double.parseDouble(b.limit()));
        Optional<Double> written = Optional.ofNullable(schema).map(value -> ((Number) value).doubleValue());
        return table.equals(written)
                ? List.of()
                : List.of(key.path() + ": " + keyword + " is " + table.orElse(null) + " in the table, " + schema
                        + " in the schema");
    }

    @Test
    void theDocsTablesHaveEachKeyOfTheTableWithItsTypeDefaultAndAllowedValues() throws IOException {
        String docs = Files.readString(Path.of("..", "docs", "manifest.md"), StandardCharsets.UTF_8);
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, List<Level>> section : DOC_SECTIONS.entrySet()) {
            Map<String, List<String>> rows = docRows(docs, section.getKey());
            String base = section.getValue().get(0).path();
            List<String> documented = new ArrayList<>();
            for (Level level : section.getValue()) {
                for (ManifestKey key : ManifestKeys.at(level)) {
                    if (key.type() == ValueType.REFUSED) {
                        continue;
                    }
                    String relative = base.isEmpty() ? key.path() : key.path().substring(base.length() + 1);
                    documented.add(relative);
                    List<String> row = rows.get(relative);
                    if (row != null) {
                        problems.addAll(docRow(key, row));
                        continue;
                    }
                    String parent = relative.substring(0, Math.max(0, relative.lastIndexOf('.')))
                            .replace("[]", "");
                    List<String> parentRow = rows.get(parent);
                    if (parentRow == null) {
                        problems.add(section.getKey() + ": " + relative + " has no row, and neither has its mapping");
                    } else {
                        problems.addAll(inline(key, String.join(" | ", parentRow)));
                    }
                }
            }
            for (String written : rows.keySet()) {
                if (!documented.contains(written) && !written.startsWith("x-")) {
                    problems.add(
                            section.getKey() + ": the docs have a row for " + written + ", the table has no such key");
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    /** A key with its own row: the type column names its type (or lists its values), the default column its default. */
    private static List<String> docRow(ManifestKey key, List<String> row) {
        List<String> problems = new ArrayList<>();
        String type = row.get(1);
        String written = row.get(2);
        if (key.type() == ValueType.ENUM) {
            if (!backticked(type).equals(key.allowed())) {
                problems.add(key.path() + ": the docs' type column lists " + backticked(type) + ", the table allows "
                        + key.allowed());
            }
        } else if (!type.contains(docWord(key.type()))) {
            problems.add(key.path() + ": the docs' type column '" + type + "' does not say " + docWord(key.type()));
        }
        for (Optional<ManifestKey.Bound> bound : List.of(key.min(), key.max())) {
            bound.filter(b -> !Pattern.compile("(?<![0-9])" + Pattern.quote(b.limit()) + "(?![0-9])")
                            .matcher(type)
                            .find())
                    .ifPresent(b -> problems.add(key.path() + ": the docs' type column '" + type
                            + "' does not give the bound " + b.limit()));
        }
        String expected = key.defaultValue()
                .map(value -> "`" + value + "`")
                .or(key::computedDefault)
                .orElse(key.required() ? "required" : "");
        boolean agrees = expected.isEmpty()
                ? !written.startsWith("`") && !written.matches("required(,.*)?")
                : expected.equals("required") ? written.matches("required(,.*)?") : written.startsWith(expected);
        if (!agrees) {
            problems.add(key.path() + ": the docs' default is '" + written + "', the table's "
                    + (expected.isEmpty() ? "none" : "'" + expected + "'"));
        }
        return problems;
    }

    /** A key of a mapping described in its mapping's row: named there, with its default and allowed values. */
    private static List<String> inline(ManifestKey key, String row) {
        List<String> problems = new ArrayList<>();
        Matcher named =
                Pattern.compile("(?<![A-Za-z])" + key.name() + "(?![A-Za-z])").matcher(row);
        if (!named.find()) {
            return List.of(key.path() + ": not named in its mapping's row of the docs");
        }
        // What the row says of the key: from its name to the end of its parenthesis or of its mapping.
        int end = row.length();
        for (char closing : new char[] {')', '}'}) {
            int at = row.indexOf(closing, named.end());
            end = at < 0 ? end : Math.min(end, at + 1);
        }
        String said = row.substring(named.start(), end);
        Optional<String> value = key.defaultValue();
        if (value.isPresent()
                && !row.contains(key.name() + ": " + value.get())
                && !said.contains("default `" + value.get() + "`")
                && !said.contains("default " + value.get())) {
            problems.add(key.path() + ": its mapping's row of the docs does not give its default " + value.get());
        }
        for (String allowed : key.allowed()) {
            if (!said.contains("`" + allowed + "`")) {
                problems.add(key.path() + ": its mapping's row of the docs does not list " + allowed);
            }
        }
        return problems;
    }

    private static String docWord(ValueType type) {
        return switch (type) {
            case STRING -> "string";
            case PATH -> "path";
            case CLASS_NAME -> "class name";
            case TOPIC -> "topic name";
            case TOPICS -> "list of topic names";
            case INTEGER -> "integer";
            case NUMBER -> "number";
            case BOOLEAN -> "boolean";
            case DURATION, DURATION_OR_ZERO -> "duration";
            case SIZE -> "size";
            case MAPPING -> "mapping";
            case LIST -> "list";
            case SECRET_SOURCE -> "`{env: NAME}` or `{file: path}`";
            case MAPPING_OR_NONE -> "mapping or `none`";
            case TOPIC_OR_MAPPING -> "topic name, or a mapping";
            case BOOLEAN_OR_TOPIC -> "`true` \\| `false` \\| a topic";
            case STRING_OR_MAPPING -> "string or mapping";
            case ENUM, REFUSED -> throw new IllegalArgumentException(type.name());
        };
    }

    /** The rows of the first table under {@code ## <section>}: the key (without backticks), then every cell. */
    private static Map<String, List<String>> docRows(String docs, String section) {
        int start = docs.indexOf("\n## " + section + "\n");
        assertThat(start).as("docs/manifest.md has a section ## " + section).isNotNegative();
        int next = docs.indexOf("\n## ", start + 1);
        String text = docs.substring(start, next < 0 ? docs.length() : next);
        Map<String, List<String>> rows = new LinkedHashMap<>();
        boolean inTable = false;
        for (String line : text.split("\n")) {
            if (line.startsWith("| `")) {
                inTable = true;
                List<String> cells = new ArrayList<>();
                // Cells are split at '|' but not at '\|', which is a '|' inside a cell.
                for (String cell : line.substring(1, line.length() - 1).split("(?<!\\\\)\\|")) {
                    cells.add(cell.strip());
                }
                String key = cells.get(0).replace("`", "").replace("-...", "-");
                // "inputProperties: `true` \| `false`" is a boolean written as its two values.
                if (cells.get(1).equals("`true` \\| `false`")) {
                    cells.set(1, "boolean");
                }
                rows.put(key, cells);
            } else if (inTable && !line.startsWith("|")) {
                break;
            }
        }
        return rows;
    }

    private static List<String> backticked(String text) {
        List<String> values = new ArrayList<>();
        Matcher matcher = Pattern.compile("`([^`]+)`").matcher(text);
        while (matcher.find()) {
            values.add(matcher.group(1));
        }
        return values;
    }

    private static Object typed(ValueType type, String value) {
        return switch (type) {
            case INTEGER, NUMBER -> Double.parseDouble(value);
            case BOOLEAN -> Boolean.parseBoolean(value);
            default -> value;
        };
    }

    /** Numbers compare as doubles: the schema writes 2, the table "2". */
    private static Object normal(Object value) {
        return value instanceof Number number ? number.doubleValue() : value;
    }

    private static List<String> types(Map<String, Object> schema) {
        Object type = schema.get("type");
        if (type instanceof List<?> list) {
            return list.stream().map(String::valueOf).toList();
        }
        return type == null ? List.of() : List.of((String) type);
    }

    /** The schema itself, or the mapping option of its {@code anyOf} (output: a topic, or a mapping). */
    private static Map<String, Object> objectOption(Map<String, Object> schema) {
        if (schema.containsKey("properties")) {
            return schema;
        }
        for (Object option : (List<?>) schema.get("anyOf")) {
            if ("object".equals(map(option).get("type"))) {
                return map(option);
            }
        }
        throw new AssertionError("no object option in " + schema);
    }

    /** The schema a {@code $ref} points at, with the referring keywords beside it. */
    private static Map<String, Object> resolve(Map<String, Object> schema) {
        if (!(schema.get("$ref") instanceof String ref) || !ref.startsWith("#/$defs/")) {
            return schema;
        }
        Map<String, Object> resolved = new LinkedHashMap<>(at("$defs", ref.substring("#/$defs/".length())));
        schema.forEach((keyword, value) -> {
            if (!keyword.equals("$ref")) {
                resolved.put(keyword, value);
            }
        });
        if (resolved.get("anyOf") instanceof List<?> anyOf) {
            // $defs/boolean is anyOf [boolean, substitution]: take its types as the property's own.
            List<String> types = new ArrayList<>(types(resolved));
            anyOf.forEach(option -> types.addAll(types(map(option))));
            resolved.put("type", types);
        }
        return resolved;
    }

    private static Map<String, Object> at(String... path) {
        Map<String, Object> node = SCHEMA;
        for (String key : path) {
            node = map(node.get(key));
        }
        return node;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> readSchema() {
        try (InputStream in = ManifestKeysAgreementTest.class.getResourceAsStream("/settle-manifest.schema.json")) {
            return (Map<String, Object>) new Yaml(new SafeConstructor(new LoaderOptions()))
                    .load(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
