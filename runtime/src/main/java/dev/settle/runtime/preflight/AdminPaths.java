package dev.settle.runtime.preflight;

import dev.settle.runtime.manifest.Topics;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/** Where the broker's admin API answers about a topic or its namespace. */
final class AdminPaths {
    private AdminPaths() {}

    /** {@code persistent://t/ns/topic} as {@code /admin/v2/persistent/t/ns/topic}. */
    static String topicPath(String topic) {
        topic = Topics.fullName(topic);
        String domain = topic.startsWith("non-persistent://") ? "non-persistent" : "persistent";
        return "/admin/v2/" + domain + "/" + localPath(topic);
    }

    /** {@code persistent://t/ns/topic} as {@code t/ns/topic}, the local name URL-encoded. */
    static String localPath(String topic) {
        String rest = Topics.fullName(topic);
        rest = rest.substring(rest.indexOf("://") + 3);
        String[] parts = rest.split("/", 3);
        return parts[0] + "/" + parts[1] + "/" + URLEncoder.encode(parts[2], StandardCharsets.UTF_8);
    }

    static String namespace(String topic) {
        String rest = Topics.fullName(topic);
        rest = rest.substring(rest.indexOf("://") + 3);
        String[] parts = rest.split("/", 3);
        return parts[0] + "/" + parts[1];
    }

    static String namespacePath(String topic) {
        return "/admin/v2/namespaces/" + namespace(topic);
    }
}
