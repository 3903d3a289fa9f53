package dev.settle.testbroker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@code settle run} manifest written in a test: the broker, the HTTP server on 127.0.0.1 (a free port unless set),
 * any other top-level section, and the subscriptions, each with its keys in the order given. Values are written as
 * they are (YAML), so a test says {@code set("failureBackoff", "none")} or {@code set("function", "Upper")} exactly as
 * a user would write it; a nested block ({@code output:} with its keys, an {@code onException:} list) goes in as
 * lines with {@link Subscription#yaml}.
 *
 * <pre>{@code
 * Path file = pulsar.manifest()
 *         .subscription("orders", topic).set("type", "Shared").jar("orders.jar").config("out", out.toString())
 *         .writeTo(folder.resolve("settle.yaml"));
 * }</pre>
 */
public final class Manifest {
    private String serviceUrl;
    private String adminUrl;
    private int httpPort;
    private final List<String> sections = new ArrayList<>();
    private final List<Subscription> subscriptions = new ArrayList<>();

    /** A manifest on the broker at {@code serviceUrl}. */
    public Manifest(String serviceUrl) {
        this.serviceUrl = serviceUrl;
    }

    /** Another broker than the fixture's (one that is not there, a proxy, a TLS URL). */
    public Manifest serviceUrl(String url) {
        serviceUrl = url;
        return this;
    }

    /** {@code pulsar.adminUrl}, the broker's admin API (unset by default: the checks that need it are not made). */
    public Manifest adminUrl(String url) {
        adminUrl = url;
        return this;
    }

    /** The HTTP server's port (0, the default: a free one). */
    public Manifest httpPort(int port) {
        httpPort = port;
        return this;
    }

    /** Top-level YAML written between {@code http:} and {@code subscriptions:}, such as an {@code admin:} block. */
    public Manifest section(String yaml) {
        sections.add(yaml.endsWith("\n") ? yaml : yaml + "\n");
        return this;
    }

    /** Adds the subscription {@code name} on {@code topics} and returns it, to set its keys. */
    public Subscription subscription(String name, String... topics) {
        Subscription subscription = new Subscription(this, name, List.of(topics));
        subscriptions.add(subscription);
        return subscription;
    }

    /** The manifest's YAML. */
    public String text() {
        StringBuilder yaml = new StringBuilder()
                .append("pulsar:\n  serviceUrl: ")
                .append(serviceUrl)
                .append('\n');
        if (adminUrl != null) {
            yaml.append("  adminUrl: ").append(adminUrl).append('\n');
        }
        yaml.append("http:\n  port: ").append(httpPort).append("\n  bindAddress: 127.0.0.1\n");
        sections.forEach(yaml::append);
        if (!subscriptions.isEmpty()) {
            yaml.append("subscriptions:\n");
            subscriptions.forEach(subscription -> subscription.appendTo(yaml));
        }
        return yaml.toString();
    }

    /** Writes {@link #text()} to {@code file} and returns it. */
    public Path writeTo(Path file) {
        try {
            return Files.writeString(file, text());
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the manifest " + file, e);
        }
    }

    @Override
    public String toString() {
        return text();
    }

    /** One entry of {@code subscriptions:}; its setters return it, and {@link #writeTo} ends the whole manifest. */
    public static final class Subscription {
        private final Manifest manifest;
        private final String name;
        private final List<String> topics;
        private final Map<String, String> keys = new LinkedHashMap<>();
        private final Map<String, String> config = new LinkedHashMap<>();
        private final List<String> lines = new ArrayList<>();

        private Subscription(Manifest manifest, String name, List<String> topics) {
            this.manifest = manifest;
            this.name = name;
            this.topics = topics;
        }

        /** {@code key: value} as YAML ({@code type: Key_Shared}, {@code concurrency: 4}, {@code maxAttempts: 3}...). */
        public Subscription set(String key, Object value) {
            keys.put(key, String.valueOf(value));
            return this;
        }

        /** {@code jar: <file>}, relative to the manifest's folder or absolute. */
        public Subscription jar(String file) {
            return set("jar", file);
        }

        /** {@code type: <type>}: Shared, Key_Shared, Failover or Exclusive. */
        public Subscription type(String type) {
            return set("type", type);
        }

        /** {@code maxAttempts} and {@code deadLetterTopic} together, as the manifest requires. */
        public Subscription deadLetter(int maxAttempts, String topic) {
            return set("maxAttempts", maxAttempts).set("deadLetterTopic", topic);
        }

        /** An entry of the handler's {@code config:} map. */
        public Subscription config(String key, Object value) {
            config.put(key, String.valueOf(value));
            return this;
        }

        /** YAML lines written as they are, indented under this subscription (a nested block such as {@code output:}). */
        public Subscription yaml(String block) {
            lines.add(block.stripTrailing());
            return this;
        }

        /** Another subscription of the same manifest. */
        public Subscription subscription(String name, String... topics) {
            return manifest.subscription(name, topics);
        }

        /** The whole manifest, written to {@code file}. */
        public Path writeTo(Path file) {
            return manifest.writeTo(file);
        }

        /** The whole manifest's YAML. */
        public String text() {
            return manifest.text();
        }

        private void appendTo(StringBuilder yaml) {
            yaml.append("  - name: ").append(name).append('\n');
            yaml.append("    topics: [").append(String.join(", ", topics)).append("]\n");
            keys.forEach((key, value) ->
                    yaml.append("    ").append(key).append(": ").append(value).append('\n'));
            lines.forEach(block -> yaml.append(block.indent(4)));
            if (!config.isEmpty()) {
                yaml.append("    config:\n");
                config.forEach((key, value) -> yaml.append("      ")
                        .append(key)
                        .append(": ")
                        .append(value)
                        .append('\n'));
            }
        }
    }
}
