package dev.settle.runtime.manifest;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Loads and validates a manifest: the one code path of both {@code settle validate} and {@code settle run}, so
 * that what validates is exactly what runs.
 *
 * <p>The YAML is only <em>composed</em> into a node tree, never constructed into objects, so no tag can
 * instantiate a type; aliases, nesting and size are limited so that a hostile document (a "billion laughs") is
 * refused at once with bounded memory. The tree is then read key by key, so that every problem carries the line
 * and column of the value at fault, and all problems are reported together.
 */
public final class ManifestLoader {
    /** Largest manifest accepted, in bytes; real manifests are a few kilobytes. */
    public static final int MAX_BYTES = 1024 * 1024;
    /**
     * Aliases to lists or mappings allowed in one document. A merge key ({@code <<: *defaults}) per subscription
     * counts one each; a billion-laughs document needs about ten per level.
     */
    static final int MAX_COLLECTION_ALIASES = 50;
    /** Deepest nesting accepted; the manifest itself needs five levels. */
    static final int MAX_NESTING_DEPTH = 50;

    /** How SnakeYAML's tag inspector refuses a {@code !!java.lang.Class}-style tag while composing. */
    private static final String GLOBAL_TAG = "Global tag is not allowed:";

    private ManifestLoader() {}

    /**
     * Loads a manifest, substituting {@code ${...}} from the process environment.
     *
     * @param file the manifest; problems print it as given
     * @return the validated manifest
     * @throws ManifestException with every problem found, when the manifest is refused
     * @throws IOException when the file cannot be read at all (missing, a folder, unreadable)
     */
    public static Manifest load(Path file) throws ManifestException, IOException {
        return load(file, System.getenv());
    }

    /**
     * Loads a manifest, substituting {@code ${...}} and reading {@code token: {env: ...}} from
     * {@code environment}.
     *
     * @see #load(Path)
     */
    public static Manifest load(Path file, Map<String, String> environment) throws ManifestException, IOException {
        return load(file, environment, true);
    }

    /**
     * As {@link #load(Path, Map)}, but each subscription's {@code jar} is taken as a path and not looked for: for
     * checking, on one machine, a manifest bound for another whose JARs exist only there ({@code settle validate
     * --skip-jar-check}). Such a manifest has not been checked for {@code run}: {@code run} loads with the JARs.
     */
    public static Manifest loadWithoutJars(Path file, Map<String, String> environment)
            throws ManifestException, IOException {
        return load(file, environment, false);
    }

    private static Manifest load(Path file, Map<String, String> environment, boolean jarsMustExist)
            throws ManifestException, IOException {
        String text = read(file);
        Node root;
        try {
            root = new Yaml(new SafeConstructor(options())).compose(new StringReader(text));
        } catch (MarkedYAMLException e) {
            String problem = e.getProblem();
            if (problem != null && problem.startsWith(GLOBAL_TAG)) {
                throw refused(
                        file,
                        e.getProblemMark(),
                        "custom YAML tags are not supported, was '"
                                + problem.substring(GLOBAL_TAG.length()).strip() + "'; remove the tag");
            }
            YamlSyntax.Explained explained = YamlSyntax.explain(e);
            throw refused(file, explained.mark(), explained.message());
        } catch (YAMLException e) {
            // Limits (aliases, depth, size) are reported without a mark.
            String message = e.getMessage() == null ? e.toString() : e.getMessage();
            if (message.startsWith("Number of aliases")) {
                message = "uses more than " + MAX_COLLECTION_ALIASES + " aliases of lists or mappings, which is how"
                        + " a 'billion laughs' document explodes; write the values out";
            } else if (message.startsWith("Nesting Depth")) {
                message = "nests lists or mappings more than " + MAX_NESTING_DEPTH + " levels deep; a manifest needs"
                        + " five";
            }
            throw refused(file, null, "refused: " + message);
        }
        if (root == null) {
            throw refused(file, null, "the manifest is empty; it needs pulsar: and subscriptions:");
        }
        return new ManifestReader(file, environment, jarsMustExist).read(root);
    }

    private static String read(Path file) throws IOException, ManifestException {
        if (Files.isDirectory(file)) {
            throw new IOException("is a folder, not a manifest file");
        }
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            // Read one byte past the limit rather than trusting the file size (a pipe or /proc file has none).
            bytes = in.readNBytes(MAX_BYTES + 1);
        }
        if (bytes.length > MAX_BYTES) {
            throw refused(file, null, "is larger than " + MAX_BYTES + " bytes; a manifest is a few kilobytes");
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw refused(file, null, "is not UTF-8 text; save it as UTF-8");
        }
    }

    private static LoaderOptions options() {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(true); // found by ManifestReader, which can name both places
        options.setAllowRecursiveKeys(false);
        options.setMaxAliasesForCollections(MAX_COLLECTION_ALIASES);
        options.setNestingDepthLimit(MAX_NESTING_DEPTH);
        options.setCodePointLimit(MAX_BYTES);
        options.setProcessComments(false);
        return options;
    }

    private static ManifestException refused(Path file, Mark mark, String message) {
        Location location =
                mark == null ? new Location(file, 1, 1) : new Location(file, mark.getLine() + 1, mark.getColumn() + 1);
        return new ManifestException(List.of(new Problem(location, "(document)", message)));
    }
}
