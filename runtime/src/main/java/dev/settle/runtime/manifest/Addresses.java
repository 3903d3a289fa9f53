package dev.settle.runtime.manifest;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The rules for the network addresses a manifest names, decided without the network: {@code validate} must give
 * the same answer on a laptop and in the cluster, so no name is looked up in DNS.
 */
final class Addresses {
    private static final Pattern IPV4 = Pattern.compile(
            "((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])");

    private Addresses() {}

    /**
     * Whether {@code http.bindAddress} can be bound as written: an IPv4 literal ({@code 0.0.0.0}), an IPv6 literal
     * with or without brackets ({@code ::}, {@code [::1]}), or {@code localhost}. A host name would be looked up
     * when binding, and {@code 999.1.1.1} would be too, then fail only at {@code run}.
     */
    static boolean isBindable(String address) {
        if (address.equals("localhost") || IPV4.matcher(address).matches()) {
            return true;
        }
        if (!address.contains(":")) {
            return false;
        }
        String bracketed = address.startsWith("[") ? address : "[" + address + "]";
        try {
            // In brackets the JDK parses an IPv6 literal or refuses it; it never asks DNS.
            InetAddress.getByName(bracketed);
            return true;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * The mapping's {@code bindAddress}, stripped; empty when absent, or after saying it is not an address this host
     * can bind ({@code examples} name the usual ones in the refusal).
     */
    static Optional<String> bindAddress(NodeReader reader, NodeReader.Mapping mapping, String examples) {
        return mapping.get("bindAddress")
                .flatMap(value -> reader.nonBlank(value, mapping.path("bindAddress"))
                        .map(String::strip)
                        .filter(text -> {
                            if (isBindable(text)) {
                                return true;
                            }
                            reader.problem(
                                    value,
                                    mapping.path("bindAddress"),
                                    "must be an IP address such as " + examples + ", or 'localhost', was '" + text
                                            + "'");
                            return false;
                        }));
    }

    /**
     * Whether {@code host} (from a URL, IPv6 in brackets or not) is this machine: {@code localhost}, {@code 127.x.y.z}
     * or {@code ::1}. Literals only; a name is never looked up.
     */
    static boolean isLoopback(String host) {
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        if (bare.equalsIgnoreCase("localhost")) {
            return true;
        }
        if (IPV4.matcher(bare).matches()) {
            return bare.startsWith("127.");
        }
        if (!bare.contains(":")) {
            return false;
        }
        try {
            return InetAddress.getByName("[" + bare + "]").isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * The first port of a {@code pulsar://} or {@code pulsar+ssl://} service URL that is not 1 to 65535, as written
     * ({@code pulsar://a:6650,b:70000} gives {@code 70000}); empty when every host's port is fine or left out.
     */
    static Optional<String> badPort(String serviceUrl) {
        String authority = serviceUrl.substring(serviceUrl.indexOf("://") + 3);
        int slash = authority.indexOf('/');
        if (slash >= 0) {
            authority = authority.substring(0, slash);
        }
        for (String host : authority.split(",", -1)) {
            int close = host.lastIndexOf(']');
            int colon = host.indexOf(':', close + 1);
            if (colon < 0) {
                continue;
            }
            String port = host.substring(colon + 1);
            if (!port.matches("[0-9]{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
                return Optional.of(port);
            }
        }
        return Optional.empty();
    }
}
