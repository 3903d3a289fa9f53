package dev.settle.runtime.manifest;

import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A handler JAR kept in Pulsar's package management: {@code function://tenant/namespace/name@version} (or
 * {@code sink://}, {@code source://}). Every part is a plain name, so the URL it is fetched from is made of the
 * manifest's {@code pulsar.adminUrl} and these names only.
 */
public record PackageRef(String type, String tenant, String namespace, String name, String version) {
    private static final String PART = "[A-Za-z0-9][A-Za-z0-9._-]*";
    private static final Pattern REFERENCE =
            Pattern.compile("(function|sink|source)://(" + PART + ")/(" + PART + ")/(" + PART + ")@(" + PART + ")");
    private static final Pattern SCHEME = Pattern.compile("^(function|sink|source)://.*", Pattern.DOTALL);

    public PackageRef {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(version, "version");
    }

    /** Whether a {@code jar:} value names a package rather than a path (it may still be malformed). */
    public static boolean isPackage(String jar) {
        return SCHEME.matcher(jar.strip()).matches();
    }

    /** The package a {@code jar:} value names, or empty when it is not one well formed. */
    public static Optional<PackageRef> parse(String jar) {
        Matcher matcher = REFERENCE.matcher(jar.strip());
        if (!matcher.matches()) {
            return Optional.empty();
        }
        return Optional.of(new PackageRef(
                matcher.group(1), matcher.group(2), matcher.group(3), matcher.group(4), matcher.group(5)));
    }

    /** The path under the admin API's root: {@code /admin/v3/packages/function/tenant/namespace/name/version}. */
    public String adminPath() {
        return "/admin/v3/packages/" + type + "/" + tenant + "/" + namespace + "/" + name + "/" + version;
    }

    @Override
    public String toString() {
        return type + "://" + tenant + "/" + namespace + "/" + name + "@" + version;
    }
}
