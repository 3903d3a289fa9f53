package dev.settle.runtime.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.ManifestKey.Level;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Holds {@code settle-manifest.schema.json} to the loader: at every level the schema's {@code properties} are
 * exactly the keys the loader accepts, its {@code required} lists are the loader's, no level allows other keys,
 * and its enums are the model's. No JSON Schema library is on the class path, so a small checker of the keywords
 * the schema uses ({@code $ref}, {@code type}, {@code properties}, {@code required}, {@code enum}, ...) shows that
 * the schema accepts every valid golden manifest and refuses typical mistakes.
 */
class ManifestSchemaTest {
    private static final Map<String, Object> SCHEMA = readSchema();

    @SuppressWarnings("unchecked")
    private static Map<String, Object> readSchema() {
        // JSON is YAML: SnakeYAML reads the schema without a JSON library.
        try (InputStream in = ManifestSchemaTest.class.getResourceAsStream("/settle-manifest.schema.json")) {
            return (Map<String, Object>) new Yaml(new SafeConstructor(new LoaderOptions()))
                    .load(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> at(String... path) {
        Map<String, Object> node = SCHEMA;
        for (String key : path) {
            node = (Map<String, Object>) node.get(key);
        }
        return node;
    }

    @SuppressWarnings("unchecked")
    private static List<String> keys(Map<String, Object> object) {
        return List.copyOf(((Map<String, Object>) object.get("properties")).keySet());
    }

    @SuppressWarnings("unchecked")
    private static List<String> required(Map<String, Object> object) {
        return (List<String>) object.getOrDefault("required", List.of());
    }

    @Test
    void everyLevelOfTheSchemaHasExactlyTheKeysTheLoaderAccepts() {
        Map<String, Object> auth = at("$defs", "pulsar", "properties", "authentication");
        assertLevel(SCHEMA, Level.ROOT);
        assertLevel(at("$defs", "pulsar"), Level.PULSAR);
        assertLevel(auth, Level.AUTHENTICATION);
        assertLevel(at("$defs", "pulsar", "properties", "authentication", "properties", "token"), Level.PULSAR_TOKEN);
        assertLevel(at("$defs", "pulsar", "properties", "authentication", "properties", "oauth2"), Level.OAUTH2);
        assertLevel(
                at("$defs", "pulsar", "properties", "authentication", "properties", "tls"), Level.CLIENT_CERTIFICATE);
        assertLevel(at("$defs", "pulsar", "properties", "tls"), Level.TLS);
        assertLevel(at("$defs", "http"), Level.HTTP);
        assertLevel(at("properties", "startup"), Level.STARTUP);
        assertLevel(at("properties", "shutdown"), Level.SHUTDOWN);
        assertLevel(at("$defs", "admin"), Level.ADMIN);
        assertLevel(at("$defs", "admin", "properties", "token"), Level.ADMIN_TOKEN);
        assertLevel(at("$defs", "subscription"), Level.SUBSCRIPTION);
        // output: a topic, or a mapping of the topic and the producer settings.
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> output = (List<Map<String, Object>>)
                at("$defs", "subscription", "properties", "output").get("anyOf");
        assertLevel(output.get(1), Level.OUTPUT);
        assertLevel(at("$defs", "subscription", "properties", "commitBatch"), Level.COMMIT_BATCH);
        assertLevel(at("$defs", "subscription", "properties", "breaker"), Level.BREAKER);
        // windowConfig: the keys Settle reads; the ones it refuses (saying why) are not offered.
        assertLevel(at("$defs", "subscription", "properties", "windowConfig"), Level.WINDOW);
        assertLevel(at("$defs", "subscription", "properties", "onException", "items"), Level.EXCEPTION_RULE);
    }

    /** The keys the loader reads at {@code level}: those it refuses are no part of the schema. */
    private static void assertLevel(Map<String, Object> object, Level level) {
        assertLevel(
                object,
                ManifestKeys.at(level).stream()
                        .filter(key -> key.type() != ManifestKey.ValueType.REFUSED)
                        .map(ManifestKey::name)
                        .toList(),
                level.required());
    }

    private static void assertLevel(Map<String, Object> object, List<String> keys, List<String> required) {
        assertThat(keys(object)).containsExactlyInAnyOrderElementsOf(keys);
        assertThat(required(object)).containsExactlyInAnyOrderElementsOf(required);
        assertThat(object.get("additionalProperties")).isEqualTo(false);
    }

    @Test
    void theSchemasEnumsAreTheModelsSpellings() {
        Map<String, Object> subscription = at("$defs", "subscription", "properties");
        assertThat(enumOf(subscription, "type"))
                .containsExactlyElementsOf(Arrays.stream(SubscriptionKind.values())
                        .map(SubscriptionKind::manifestName)
                        .toList());
        assertThat(enumOf(subscription, "schema"))
                .containsExactlyElementsOf(Arrays.stream(SchemaKind.values())
                        .map(SchemaKind::manifestName)
                        .toList());
        assertThat(enumOf(subscription, "outputSchema")).isEqualTo(enumOf(subscription, "schema"));
        assertThat(enumOf(subscription, "initialPosition"))
                .containsExactlyElementsOf(Arrays.stream(InitialPosition.values())
                        .map(p -> p.name().toLowerCase(Locale.ROOT))
                        .toList());
    }

    @SuppressWarnings("unchecked")
    private static List<Object> enumOf(Map<String, Object> properties, String key) {
        return (List<Object>) ((Map<String, Object>) properties.get(key)).get("enum");
    }

    @Test
    void theSchemaAcceptsEveryValidManifest() throws IOException {
        for (Path manifest : manifests("valid")) {
            assertThat(validate(SCHEMA, yaml(manifest), ""))
                    .as(manifest.getFileName().toString())
                    .isEmpty();
        }
    }

    @Test
    void theSchemaAcceptsEveryExampleManifestOfTheRepository() throws IOException {
        List<Path> examples;
        try (Stream<Path> files = Files.walk(Path.of("..", "examples"))) {
            examples = files.filter(file -> file.toString().endsWith(".yaml")
                            && !file.toString().contains("target"))
                    .sorted()
                    .toList();
        }
        assertThat(examples).isNotEmpty();
        for (Path manifest : examples) {
            assertThat(validate(SCHEMA, yaml(manifest), ""))
                    .as(manifest.toString())
                    .isEmpty();
        }
    }

    @Test
    void theSchemaRefusesTypicalMistakes() throws IOException {
        for (String mistake : List.of(
                "unknown-key-with-suggestion",
                "unknown-top-level-key",
                "type-near-miss",
                "schema-near-miss",
                "concurrency-zero",
                "receiver-queue-size-zero",
                "http-port-out-of-range",
                "service-url-wrong-scheme",
                "subscriptions-empty",
                "required-keys-missing",
                "config-value-nested",
                "max-attempts-below-two",
                "duration-without-unit",
                "topics-pattern-not-qualified",
                "jar-package-malformed",
                "commit-batch-unknown-key",
                "commit-batch-max-deliveries-too-many",
                "commit-batch-max-deliveries-zero",
                "pulsar-admin-url-with-path")) {
            Path manifest = folder("invalid").resolve(mistake + ".yaml");
            assertThat(validate(SCHEMA, yaml(manifest), "")).as(mistake).isNotEmpty();
        }
    }

    private static Object yaml(Path manifest) throws IOException {
        try (Reader reader = Files.newBufferedReader(manifest)) {
            return new Yaml(new SafeConstructor(new LoaderOptions())).load(reader);
        }
    }

    private static Path folder(String name) {
        try {
            return Path.of(
                    ManifestSchemaTest.class.getResource("/manifest/" + name).toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<Path> manifests(String name) throws IOException {
        try (Stream<Path> files = Files.list(folder(name))) {
            return files.filter(file -> file.toString().endsWith(".yaml"))
                    .sorted()
                    .toList();
        }
    }

    /** The errors of {@code value} against {@code schema}, for the keywords this schema uses. */
    @SuppressWarnings("unchecked")
    private static List<String> validate(Map<String, Object> schema, Object value, String path) {
        List<String> errors = new ArrayList<>();
        if (schema.containsKey("$ref")) {
            String[] parts = ((String) schema.get("$ref")).substring(2).split("/");
            errors.addAll(validate(at(parts), value, path));
        }
        if (schema.containsKey("anyOf")) {
            boolean any = ((List<Map<String, Object>>) schema.get("anyOf"))
                    .stream().anyMatch(option -> validate(option, value, path).isEmpty());
            if (!any) {
                errors.add(path + ": matches none of anyOf");
            }
        }
        if (schema.containsKey("enum") && !((List<Object>) schema.get("enum")).contains(value)) {
            errors.add(path + ": not in enum");
        }
        if (schema.containsKey("type")) {
            Object type = schema.get("type");
            List<String> types = type instanceof List ? (List<String>) type : List.of((String) type);
            if (types.stream().noneMatch(t -> hasType(t, value))) {
                errors.add(path + ": not of type " + types);
                return errors;
            }
        }
        if (value instanceof String text) {
            if (schema.containsKey("minLength") && text.length() < ((Number) schema.get("minLength")).intValue()) {
                errors.add(path + ": too short");
            }
            if (schema.containsKey("pattern")
                    && !Pattern.compile((String) schema.get("pattern"))
                            .matcher(text)
                            .find()) {
                errors.add(path + ": does not match " + schema.get("pattern"));
            }
        }
        if (value instanceof Number number) {
            if (schema.containsKey("minimum") && number.longValue() < ((Number) schema.get("minimum")).longValue()) {
                errors.add(path + ": below minimum");
            }
            if (schema.containsKey("maximum") && number.longValue() > ((Number) schema.get("maximum")).longValue()) {
                errors.add(path + ": above maximum");
            }
        }
        if (value instanceof List<?> list) {
            if (schema.containsKey("minItems") && list.size() < ((Number) schema.get("minItems")).intValue()) {
                errors.add(path + ": too few items");
            }
            if (schema.containsKey("items")) {
                for (int i = 0; i < list.size(); i++) {
                    errors.addAll(
                            validate((Map<String, Object>) schema.get("items"), list.get(i), path + "[" + i + "]"));
                }
            }
        }
        if (value instanceof Map<?, ?> map) {
            errors.addAll(validateObject(schema, (Map<String, Object>) map, path));
        }
        return errors;
    }

    @SuppressWarnings("unchecked")
    private static List<String> validateObject(Map<String, Object> schema, Map<String, Object> map, String path) {
        List<String> errors = new ArrayList<>();
        Map<String, Object> properties = (Map<String, Object>) schema.getOrDefault("properties", Map.of());
        Map<String, Object> patterns = (Map<String, Object>) schema.getOrDefault("patternProperties", Map.of());
        for (String key : required(schema)) {
            if (!map.containsKey(key)) {
                errors.add(path + "." + key + ": required");
            }
        }
        if (schema.containsKey("minProperties") && map.size() < ((Number) schema.get("minProperties")).intValue()) {
            errors.add(path + ": too few properties");
        }
        if (schema.containsKey("maxProperties") && map.size() > ((Number) schema.get("maxProperties")).intValue()) {
            errors.add(path + ": too many properties");
        }
        for (Map.Entry<String, Object> entry : map.entrySet()) {
            String key = String.valueOf(entry.getKey());
            if (properties.containsKey(key)) {
                errors.addAll(validate((Map<String, Object>) properties.get(key), entry.getValue(), path + "." + key));
            } else if (patterns.keySet().stream()
                    .noneMatch(p -> Pattern.compile(p).matcher(key).find())) {
                Object additional = schema.getOrDefault("additionalProperties", true);
                if (Boolean.FALSE.equals(additional)) {
                    errors.add(path + "." + key + ": not allowed");
                } else if (additional instanceof Map) {
                    errors.addAll(validate((Map<String, Object>) additional, entry.getValue(), path + "." + key));
                }
            }
        }
        return errors;
    }

    private static boolean hasType(String type, Object value) {
        switch (type) {
            case "object":
                return value instanceof Map;
            case "array":
                return value instanceof List;
            case "string":
                return value instanceof String;
            case "integer":
                return value instanceof Integer || value instanceof Long;
            case "number":
                return value instanceof Number;
            case "boolean":
                return value instanceof Boolean;
            default:
                throw new IllegalArgumentException("the checker does not know type " + type);
        }
    }
}
