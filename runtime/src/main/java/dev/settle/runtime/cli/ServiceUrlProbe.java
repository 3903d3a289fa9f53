package dev.settle.runtime.cli;

import dev.settle.runtime.publish.BrokerCause;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Whether a {@code pulsar://} service URL points at the broker's HTTP port. The Pulsar client cannot tell: its
 * connect command gets an HTTP 400 back, whose first four bytes ("HTTP", 1213486164) it reads as a frame length, and
 * it reports {@code TooLongFrameException} in a warning and "Connection already closed" to the caller; nothing
 * says "that is the HTTP port". So ask the port once, the way the client did, and read what it answers.
 */
final class ServiceUrlProbe {
    /**
     * A well-formed Pulsar CONNECT frame (total size 22, command size 18, then BaseCommand{type: CONNECT, connect:
     * {client_version: "settle-probe"}}): a broker answers it as any client's (CONNECTED, or an authentication
     * error), where a malformed one made it log a stack trace at every start.
     */
    static final byte[] FRAME = {
        0, 0, 0, 22, 0, 0, 0, 18, 0x08, 0x02, 0x12, 14, 0x0A, 12, 's', 'e', 't', 't', 'l', 'e', '-', 'p', 'r', 'o', 'b',
        'e'
    };

    private static final int CONNECT_MILLIS = 1000;
    /**
     * How long {@link #unreachable} waits for a TCP connection to each of the URL's hosts. The client itself retries a
     * refused connection until its 30 s operation timeout, and then reports a four-deep exception chain: a command
     * that cannot reach its broker says so in seconds, in words.
     */
    static final int REACH_MILLIS = 3000;

    private static final int READ_MILLIS = 2000;

    private ServiceUrlProbe() {}

    /**
     * What to say when none of {@code serviceUrl}'s hosts accepts a TCP connection within {@link #REACH_MILLIS}
     * (refused, unknown host, no answer); empty when one does, or when the URL cannot be read (the client says what it
     * says). One attempt per host, so a command that names an unreachable broker answers within seconds.
     */
    static Optional<String> unreachable(String serviceUrl) {
        return failures(serviceUrl)
                .map(failures -> "cannot reach the broker at " + serviceUrl + " ("
                        + failures.stream()
                                .map(failure -> failure.host() + ": " + failure.reason())
                                .collect(Collectors.joining(", "))
                        + "): is `settle dev` (or another Pulsar) running there? Start it, or give the broker's pulsar://"
                        + " address");
    }

    /**
     * As {@link #unreachable}, the cause alone, for a log line: "connection refused at localhost:6650 — is `settle
     * dev` running?" (each host's, when the URL names several).
     */
    static Optional<String> cause(String serviceUrl) {
        return failures(serviceUrl)
                .map(failures -> failures.stream()
                        .map(failure -> BrokerCause.at(failure.reason(), failure.host()))
                        .collect(Collectors.joining("; ")));
    }

    private record Failure(String host, String reason) {}

    /** Why each host of {@code serviceUrl} refused a TCP connection; empty when one accepts it or the URL is unreadable. */
    private static Optional<List<Failure>> failures(String serviceUrl) {
        String scheme = serviceUrl.startsWith("pulsar+ssl://") ? "pulsar+ssl://" : "pulsar://";
        if (!serviceUrl.startsWith(scheme)) {
            return Optional.empty();
        }
        String hosts = serviceUrl.substring(scheme.length()).split("/", 2)[0];
        List<Failure> failures = new ArrayList<>();
        for (String host : hosts.split(",")) {
            URI address;
            try {
                address = URI.create(scheme + host);
            } catch (IllegalArgumentException malformed) {
                return Optional.empty();
            }
            if (address.getHost() == null || address.getPort() < 0) {
                return Optional.empty();
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(address.getHost(), address.getPort()), REACH_MILLIS);
                return Optional.empty();
            } catch (java.net.UnknownHostException unknown) {
                failures.add(new Failure(host, "unknown host"));
            } catch (java.net.SocketTimeoutException silent) {
                failures.add(new Failure(host, "no answer within " + REACH_MILLIS / 1000 + " s"));
            } catch (IOException refused) {
                failures.add(new Failure(
                        host,
                        refused instanceof java.net.ConnectException ? "connection refused" : refused.toString()));
            }
        }
        return Optional.of(failures);
    }

    /** What to say when {@code serviceUrl} answers in HTTP; empty otherwise, or when it cannot be reached. */
    static Optional<String> httpInsteadOfPulsar(String serviceUrl) {
        if (!serviceUrl.startsWith("pulsar://")) {
            return Optional.empty(); // pulsar+ssl:// speaks TLS first; an http:// URL is refused by the client
        }
        String first = serviceUrl.substring("pulsar://".length()).split("[,/]", 2)[0];
        URI address;
        try {
            address = URI.create("pulsar://" + first);
        } catch (IllegalArgumentException malformed) {
            return Optional.empty();
        }
        if (address.getHost() == null || address.getPort() < 0) {
            return Optional.empty();
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address.getHost(), address.getPort()), CONNECT_MILLIS);
            socket.setSoTimeout(READ_MILLIS);
            socket.getOutputStream().write(FRAME);
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            byte[] answer = in.readNBytes(5);
            if (!new String(answer, StandardCharsets.ISO_8859_1).equals("HTTP/")) {
                return Optional.empty();
            }
        } catch (IOException unreachable) {
            return Optional.empty(); // not the question here: the client says what it says
        }
        return Optional.of("'" + serviceUrl + "' answers in HTTP: that is the broker's HTTP port (the web service,"
                + " for admin URLs); use pulsar://" + address.getHost() + ":6650, the binary protocol port (or"
                + " whichever port the broker's brokerServicePort is)");
    }
}
