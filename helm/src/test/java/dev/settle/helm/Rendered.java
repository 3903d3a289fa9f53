package dev.settle.helm;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The objects {@code helm template} rendered, parsed with SnakeYAML's safe constructor. Assertions read the
 * parsed maps, never the text.
 */
final class Rendered {
    private final List<Map<String, Object>> objects;

    private Rendered(List<Map<String, Object>> objects) {
        this.objects = List.copyOf(objects);
    }

    static Rendered parse(String output) {
        List<Map<String, Object>> objects = new ArrayList<>();
        for (Object document : yaml().loadAll(output)) {
            if (document != null) {
                objects.add(Yamls.map(document, "a rendered document"));
            }
        }
        return new Rendered(objects);
    }

    /** SnakeYAML without arbitrary types: the same safe loading the runtime uses. */
    static Yaml yaml() {
        return new Yaml(new SafeConstructor(new LoaderOptions()));
    }

    List<Map<String, Object>> all() {
        return objects;
    }

    List<String> kinds() {
        return objects.stream().map(object -> (String) object.get("kind")).toList();
    }

    List<Map<String, Object>> ofKind(String kind) {
        return objects.stream().filter(hasKind(kind)).toList();
    }

    Optional<Map<String, Object>> find(String kind) {
        List<Map<String, Object>> found = ofKind(kind);
        if (found.size() > 1) {
            throw new AssertionError("expected at most one " + kind + ", found " + found.size());
        }
        return found.stream().findFirst();
    }

    /** The one object of {@code kind}. */
    Map<String, Object> one(String kind) {
        return find(kind).orElseThrow(() -> new AssertionError("no " + kind + " rendered; kinds: " + kinds()));
    }

    Map<String, Object> deployment() {
        return one("Deployment");
    }

    Map<String, Object> podSpec() {
        return Yamls.at(deployment(), "spec", "template", "spec");
    }

    Map<String, Object> podAnnotations() {
        return Yamls.at(deployment(), "spec", "template", "metadata", "annotations");
    }

    /** The runtime container. */
    Map<String, Object> runtimeContainer() {
        return Yamls.list(podSpec().get("containers"), "containers").stream()
                .map(container -> Yamls.map(container, "a container"))
                .filter(container -> "settle".equals(container.get("name")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no container named settle"));
    }

    List<Map<String, Object>> initContainers() {
        Object list = podSpec().get("initContainers");
        if (list == null) {
            return List.of();
        }
        return Yamls.list(list, "initContainers").stream()
                .map(c -> Yamls.map(c, "an init container"))
                .toList();
    }

    List<Map<String, Object>> volumes() {
        return Yamls.list(podSpec().get("volumes"), "volumes").stream()
                .map(v -> Yamls.map(v, "a volume"))
                .toList();
    }

    Optional<Map<String, Object>> volume(String name) {
        return volumes().stream()
                .filter(volume -> name.equals(volume.get("name")))
                .findFirst();
    }

    /** The manifest the ConfigMap carries, parsed. */
    Map<String, Object> manifest() {
        return Yamls.map(yaml().load(manifestText()), "manifest.yaml");
    }

    String manifestText() {
        Map<String, Object> data = Yamls.at(one("ConfigMap"), "data");
        Object text = data.get("manifest.yaml");
        if (!(text instanceof String string)) {
            throw new AssertionError("the ConfigMap has no manifest.yaml; keys: " + data.keySet());
        }
        return string;
    }

    /** The volume mount of {@code volume} in {@code container}. */
    static Map<String, Object> mount(Map<String, Object> container, String volume) {
        return Yamls.list(container.get("volumeMounts"), "volumeMounts").stream()
                .map(mount -> Yamls.map(mount, "a volume mount"))
                .filter(mount -> volume.equals(mount.get("name")))
                .findFirst()
                .orElseThrow(() -> new AssertionError(container.get("name") + " does not mount " + volume));
    }

    /** A container's env as name → value (a string) or valueFrom (a mapping). */
    static Map<String, Object> env(Map<String, Object> container) {
        Map<String, Object> env = new LinkedHashMap<>();
        Object list = container.get("env");
        if (list == null) {
            return env;
        }
        for (Object entry : Yamls.list(list, "env")) {
            Map<String, Object> variable = Yamls.map(entry, "an env entry");
            env.put(
                    (String) variable.get("name"),
                    variable.containsKey("valueFrom") ? variable.get("valueFrom") : variable.get("value"));
        }
        return env;
    }

    private static Predicate<Map<String, Object>> hasKind(String kind) {
        return object -> kind.equals(object.get("kind"));
    }
}
