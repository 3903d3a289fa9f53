package dev.settle.runtime.manifest;

import java.util.regex.Pattern;

/**
 * A Pulsar topic name, always held fully qualified. Short names are accepted as Pulsar itself accepts them:
 * {@code orders} is {@code persistent://public/default/orders}, {@code acme/billing/orders} is
 * {@code persistent://acme/billing/orders}. Expanding them here lets the runtime compare names (the dead-letter
 * topic must not be a consumed one) and shows the user the name Pulsar will really use.
 *
 * @param persistent {@code persistent://} rather than {@code non-persistent://}
 * @param tenant the tenant
 * @param namespace the namespace within the tenant
 * @param local the topic's own name
 */
record TopicName(boolean persistent, String tenant, String namespace, String local) {
    static final String EXAMPLE = "'persistent://tenant/namespace/topic' (or a short name such as 'orders', "
            + "which means 'persistent://public/default/orders')";

    /** Pulsar's rule for tenant and namespace names ({@code NamedEntity}). */
    private static final Pattern ENTITY = Pattern.compile("[-=:.\\w]+");

    /**
     * Parses and expands a topic name.
     *
     * @throws IllegalArgumentException with a message that completes "path: ..."
     */
    static TopicName parse(String text) {
        String rest = text;
        boolean persistent = true;
        int scheme = text.indexOf("://");
        if (scheme >= 0) {
            String domain = text.substring(0, scheme);
            if (domain.equals("non-persistent")) {
                persistent = false;
            } else if (!domain.equals("persistent")) {
                throw invalid(text, "the domain must be 'persistent' or 'non-persistent'");
            }
            rest = text.substring(scheme + 3);
        }
        String[] parts = rest.split("/", -1);
        if (scheme < 0 && parts.length == 1) {
            return checked(text, new TopicName(true, "public", "default", parts[0]));
        }
        if (parts.length != 3) {
            throw invalid(text, "it must have the form " + EXAMPLE);
        }
        return checked(text, new TopicName(persistent, parts[0], parts[1], parts[2]));
    }

    private static TopicName checked(String text, TopicName name) {
        if (!ENTITY.matcher(name.tenant).matches()
                || !ENTITY.matcher(name.namespace).matches()) {
            throw invalid(text, "tenant and namespace may hold only letters, digits and - _ = : .");
        }
        if (name.local.isEmpty() || name.local.chars().anyMatch(Character::isWhitespace)) {
            throw invalid(text, "the topic's own name must not be empty or hold spaces");
        }
        return name;
    }

    private static IllegalArgumentException invalid(String text, String why) {
        return new IllegalArgumentException("is not a valid Pulsar topic name, was '" + text + "': " + why);
    }

    /** The namespace prefix, {@code persistent://tenant/namespace/}. */
    String prefix() {
        return (persistent ? "persistent" : "non-persistent") + "://" + tenant + "/" + namespace + "/";
    }

    @Override
    public String toString() {
        return prefix() + local;
    }
}
