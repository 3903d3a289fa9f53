package dev.settle.runtime.manifest;

import dev.settle.runtime.manifest.ManifestKey.Level;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Where a token in the manifest comes from ({@code pulsar.authentication.token}, {@code admin.token}): {@code {env:
 * NAME}} or {@code {file: path}}, never the token itself. The one reading of that mapping; what a file holds is read by
 * its owner (the admin token once, the Pulsar token again whenever the file changes).
 */
final class TokenSource {
    private final NodeReader reader;
    private final Map<String, String> environment;

    TokenSource(NodeReader reader, Map<String, String> environment) {
        this.reader = reader;
        this.environment = environment;
    }

    /**
     * The token {@code node} names, or empty after saying what is wrong with it.
     *
     * @param level the token mapping's keys
     * @param what the token's name in a refusal ("the token", "the admin token")
     * @param fromEnvironment what a token read from an environment variable (stripped, not blank) becomes
     * @param fromFile reads the file its node (at its path) names, saying what is wrong with it
     */
    <T> Optional<T> read(
            Level level,
            Node node,
            String path,
            String what,
            Function<Secret, T> fromEnvironment,
            BiFunction<Node, String, Optional<T>> fromFile) {
        if (node instanceof ScalarNode) {
            // Never quote it: this may well be the token itself.
            reader.problem(
                    node,
                    path,
                    "must not hold the token itself; write token: {env: NAME} to read it from an"
                            + " environment variable, or token: {file: path} to read it from a file");
            return Optional.empty();
        }
        Optional<NodeReader.Mapping> found = new KeyReader(reader, level).mapping(node, path);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        NodeReader.Mapping token = found.get();
        if (token.has("env") == token.has("file")) {
            reader.problem(node, path, "must name exactly one source: env (an environment variable) or file");
            return Optional.empty();
        }
        if (token.has("file")) {
            return fromFile.apply(token.get("file").get(), token.path("file"));
        }
        Node envNode = token.get("env").get();
        return reader.nonBlank(envNode, token.path("env")).flatMap(name -> {
            String value = environment.get(name);
            if (value == null || value.isBlank()) {
                reader.problem(
                        envNode,
                        token.path("env"),
                        "environment variable '" + name + "' is " + (value == null ? "not set" : "empty")
                                + "; set it to " + what);
                return Optional.empty();
            }
            return Optional.of(fromEnvironment.apply(new Secret(value.strip())));
        });
    }
}
