package dev.settle.runtime.publish;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Pulsar client's failure as one plain cause. The client wraps a refused connection four times
 * ({@code PulsarClientException: ExecutionException: PulsarClientException: CompletionException:
 * AnnotatedConnectException: finishConnect(..) failed with error(-111): Connection refused: localhost/127.0.0.1:6650}),
 * each wrapper repeating the class names of the ones inside: this says "connection refused at localhost:6650 — is
 * `settle dev` running?" instead, and for any other failure the innermost words that are not a wrapper's.
 */
public final class BrokerCause {
    /**
     * Netty's connect failures end with the address as {@code host/ip:port}, {@code host/<unresolved>:port}, or
     * {@code /ip:port} for a service URL that names an IP address.
     */
    private static final Pattern ADDRESS = Pattern.compile("([^\\s/:]*)/([^\\s/]*):(\\d+)\\s*$");

    private BrokerCause() {}

    /**
     * Whether the broker cannot be reached at all, and if so why, in words with what to do: "connection refused at
     * localhost:6650 — is `settle dev` running?". Empty for any other failure (a refusal by the broker, a timeout of an
     * operation on a connection that works).
     */
    public static Optional<String> unreachable(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = next(cause)) {
            if (cause instanceof UnknownHostException unknown) {
                return Optional.of("unknown host " + unknown.getMessage() + " — check the service URL");
            }
            if (cause instanceof ConnectException || cause instanceof NoRouteToHostException) {
                String address = address(failure).orElse(null);
                String what = words(cause).toLowerCase(java.util.Locale.ROOT);
                String plain = what.contains("refused")
                        ? "connection refused"
                        : what.contains("timed out") ? "no answer" : "cannot connect";
                return Optional.of(address == null ? plain : at(plain, address));
            }
            if (cause.getClass().getSimpleName().equals("ConnectTimeoutException")) {
                // Netty's, shaded by the client: a host that drops the connection attempt (a firewall, a cut).
                return Optional.of(address(failure)
                        .map(address -> at("no answer", address))
                        .orElse("no answer"));
            }
        }
        return Optional.empty();
    }

    /**
     * One cause in one line: {@link #unreachable} when that is what it is; otherwise the innermost exception that is
     * not a mere wrapper, as its simple class name and its words ("AuthorizationException: ...").
     */
    public static String describe(Throwable failure) {
        Optional<String> unreachable = unreachable(failure);
        if (unreachable.isPresent()) {
            return unreachable.get();
        }
        Throwable cause = failure;
        while (next(cause) != null && wraps(cause)) {
            cause = next(cause);
        }
        return cause.getClass().getSimpleName() + ": " + words(cause);
    }

    /**
     * {@code what} happened at {@code address} ({@code host:port}), with what to do: "connection refused at
     * localhost:6650 — is `settle dev` running?" for this machine, whether the broker runs and its port is open for
     * another.
     */
    public static String at(String what, String address) {
        return what + " at " + address + " — " + advice(address);
    }

    private static String advice(String address) {
        String host = address.contains(":") ? address.substring(0, address.lastIndexOf(':')) : address;
        return host.equals("localhost") || host.equals("127.0.0.1") || host.equals("[::1]")
                ? "is `settle dev` running?"
                : "is the broker running there, and its port open from here?";
    }

    /** A wrapper adds nothing of its own: its words are its cause's, or name its cause's class. */
    private static boolean wraps(Throwable failure) {
        if (failure instanceof ExecutionException || failure instanceof CompletionException) {
            return true;
        }
        Throwable cause = next(failure);
        String message = failure.getMessage();
        return message == null
                || message.equals(cause.getMessage())
                || message.startsWith(cause.getClass().getName())
                || message.startsWith(ExecutionException.class.getName())
                || message.startsWith(CompletionException.class.getName());
    }

    private static Optional<String> address(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = next(cause)) {
            if (cause.getMessage() != null) {
                Matcher matcher =
                        ADDRESS.matcher(cause.getMessage().lines().findFirst().orElse(""));
                if (matcher.find()) {
                    String host = matcher.group(1).isEmpty() ? matcher.group(2) : matcher.group(1);
                    return Optional.of(host + ":" + matcher.group(3));
                }
            }
        }
        return Optional.empty();
    }

    private static String words(Throwable failure) {
        String message = failure.getMessage();
        return message == null ? "(no message)" : message.lines().findFirst().orElse("");
    }

    private static Throwable next(Throwable failure) {
        Throwable cause = failure.getCause();
        return cause == failure ? null : cause;
    }
}
