package dev.settle.runtime.cli;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

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
    private static final int READ_MILLIS = 2000;

    private ServiceUrlProbe() {}

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
