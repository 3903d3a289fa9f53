package dev.settle.helm;

import com.google.gson.Gson;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The built-in Kubernetes API of one release, as the official Java client's models know it: each model class is
 * generated from that release's OpenAPI spec, and its {@code validateJsonElement} refuses a field the spec does not
 * define ("The field `imagePullPolicyy` in the JSON string is not defined in the `V1Container` properties"), a
 * missing required field, and a value of the wrong JSON type, recursively.
 *
 * <p>Each release's JAR is loaded in a class loader of its own (child of the test class path, which provides
 * Gson): two releases of the same classes cannot share one. Maven copies the JARs (helm/pom.xml).
 */
final class KubernetesApi {
    private static final String MODELS = "io.kubernetes.client.openapi.models.";
    private static final Gson GSON = new Gson();

    private final String version;
    private final ClassLoader models;

    private KubernetesApi(String version, ClassLoader models) {
        this.version = version;
        this.models = models;
    }

    /** The API of Kubernetes {@code version} ("1.29", "1.31"). */
    static KubernetesApi of(String version) {
        Path dir = Path.of(System.getProperty("settle.kubernetes.api.dir", "target/kubernetes-api"))
                .resolve(version);
        try (Stream<Path> jars = Files.list(dir)) {
            URL[] urls = jars.filter(jar -> jar.toString().endsWith(".jar"))
                    .map(KubernetesApi::url)
                    .toArray(URL[]::new);
            if (urls.length == 0) {
                throw new IllegalStateException("no client-java-api JAR in " + dir + ": run through Maven");
            }
            return new KubernetesApi(
                    version, new URLClassLoader("kubernetes-" + version, urls, KubernetesApi.class.getClassLoader()));
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "no Kubernetes " + version + " API models at " + dir
                            + ": run through Maven (helm/pom.xml copies them)",
                    e);
        }
    }

    String version() {
        return version;
    }

    /**
     * Checks {@code object} against its kind's schema.
     *
     * @return empty when the kind is not a built-in one of this release (a custom resource)
     * @throws AssertionError naming the object and what the schema refused
     */
    Optional<String> check(Map<String, Object> object) {
        String apiVersion = String.valueOf(object.get("apiVersion"));
        String kind = String.valueOf(object.get("kind"));
        Optional<Class<?>> model = model(apiVersion, kind);
        if (model.isEmpty()) {
            return Optional.empty();
        }
        JsonObject json = GSON.toJsonTree(object).getAsJsonObject();
        try {
            validator(model.get()).invoke(null, json);
        } catch (InvocationTargetException e) {
            throw new AssertionError(
                    String.format(
                            Locale.ROOT,
                            "%s %s '%s' is not valid Kubernetes %s: %s",
                            apiVersion,
                            kind,
                            name(object),
                            version,
                            e.getCause().getMessage()),
                    e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(model.get() + " has no validateJsonElement", e);
        }
        return Optional.of(model.get().getSimpleName());
    }

    /** validateJsonElement(JsonElement) from client 22 on; validateJsonObject(JsonObject) before, the same check. */
    private static Method validator(Class<?> model) throws NoSuchMethodException {
        try {
            return model.getMethod("validateJsonElement", JsonElement.class);
        } catch (NoSuchMethodException e) {
            return model.getMethod("validateJsonObject", JsonObject.class);
        }
    }

    /** {@code apps/v1} Deployment → V1Deployment, {@code autoscaling/v2} HorizontalPodAutoscaler → V2HorizontalPodAutoscaler. */
    private Optional<Class<?>> model(String apiVersion, String kind) {
        String[] groupVersion = apiVersion.split("/");
        String group = groupVersion.length == 2 ? groupVersion[0] : "";
        String ver = groupVersion[groupVersion.length - 1];
        // The built-in groups: no dot (core, apps, policy, batch, autoscaling) or *.k8s.io. Custom resources'
        // groups (keda.sh, monitoring.coreos.com) have no model here.
        if (group.contains(".") && !group.endsWith(".k8s.io")) {
            return Optional.empty();
        }
        String name = MODELS + Character.toUpperCase(ver.charAt(0)) + ver.substring(1) + kind;
        try {
            return Optional.of(Class.forName(name, false, models));
        } catch (ClassNotFoundException e) {
            throw new AssertionError(apiVersion + " " + kind + " is not a built-in kind of Kubernetes " + version
                    + " (no " + name + ")");
        }
    }

    private static Object name(Map<String, Object> object) {
        Object metadata = object.get("metadata");
        return metadata instanceof Map<?, ?> map ? map.get("name") : null;
    }

    private static URL url(Path jar) {
        try {
            return jar.toUri().toURL();
        } catch (MalformedURLException e) {
            throw new IllegalArgumentException(jar.toString(), e);
        }
    }

    static List<String> versions() {
        return List.of("1.29", "1.31");
    }
}
