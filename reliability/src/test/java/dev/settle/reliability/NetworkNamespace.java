package dev.settle.reliability;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A network namespace joined to this one by a veth pair, with addresses of its own on a /30: a runtime started
 * through {@link #exec()} reaches a broker bound to {@link #hostAddress()} over that one link, and nothing else
 * (its loopback is its own). {@link #cut()} takes the link down on the namespace's side: the host's side loses its
 * carrier but keeps its address, so the test itself still reaches the broker. Needs root (CI runs as root).
 */
final class NetworkNamespace implements AutoCloseable {
    private final String name;
    private final String hostLink;
    private final String namespaceLink;
    private final String hostAddress;
    private final String namespaceAddress;

    private NetworkNamespace(long id) {
        this.name = "settle-rel-" + id;
        // Interface names are at most 15 characters.
        this.hostLink = "srh" + id;
        this.namespaceLink = "srn" + id;
        int subnet = (int) (id % 250) + 1;
        this.hostAddress = "10.213." + subnet + ".1";
        this.namespaceAddress = "10.213." + subnet + ".2";
    }

    /** The namespace, or why this machine does not allow one (no iproute2, not root, a sandbox that forbids it). */
    static Result create() throws InterruptedException {
        NetworkNamespace namespace =
                new NetworkNamespace(ProcessHandle.current().pid() % 100_000);
        try {
            namespace.run("ip", "netns", "add", namespace.name);
        } catch (IOException e) {
            return new Result(Optional.empty(), "cannot create a network namespace here: " + e.getMessage());
        }
        try {
            namespace.run(
                    "ip", "link", "add", namespace.hostLink, "type", "veth", "peer", "name", namespace.namespaceLink);
            namespace.run("ip", "link", "set", namespace.namespaceLink, "netns", namespace.name);
            namespace.run("ip", "addr", "add", namespace.hostAddress + "/30", "dev", namespace.hostLink);
            namespace.run("ip", "link", "set", namespace.hostLink, "up");
            namespace.inside("ip", "addr", "add", namespace.namespaceAddress + "/30", "dev", namespace.namespaceLink);
            namespace.inside("ip", "link", "set", namespace.namespaceLink, "up");
            namespace.inside("ip", "link", "set", "lo", "up");
        } catch (IOException e) {
            namespace.close();
            throw new IllegalStateException("the namespace was created, but not its link: " + e.getMessage(), e);
        }
        return new Result(Optional.of(namespace), "");
    }

    /** The namespace, or the reason there is none. */
    record Result(Optional<NetworkNamespace> namespace, String reason) {}

    String hostAddress() {
        return hostAddress;
    }

    /** The command prefix that runs a command inside the namespace. */
    List<String> exec() {
        return List.of("ip", "netns", "exec", name);
    }

    /** Takes the link down, as a cable pulled or a switch lost. */
    void cut() throws IOException, InterruptedException {
        inside("ip", "link", "set", namespaceLink, "down");
    }

    /** Brings the link back up; its address and route come back with it. */
    void restore() throws IOException, InterruptedException {
        inside("ip", "link", "set", namespaceLink, "up");
    }

    /**
     * The HTTP status of {@code GET http://127.0.0.1:port/path} asked inside the namespace; -1 when nothing answers.
     * Asked with bash's {@code /dev/tcp}, so the machine needs no HTTP client program.
     */
    int status(int port, String path) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(exec());
        command.addAll(List.of(
                "timeout",
                "3",
                "bash",
                "-c",
                "exec 3<>/dev/tcp/127.0.0.1/" + port + " && printf 'GET " + path
                        + " HTTP/1.0\\r\\n\\r\\n' >&3 && head -n 1 <&3"));
        Process probe = new ProcessBuilder(command).redirectErrorStream(true).start();
        String statusLine = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        probe.waitFor(10, TimeUnit.SECONDS);
        // "HTTP/1.1 200 OK"
        String[] fields = statusLine.split(" ");
        return fields.length >= 2 && fields[0].startsWith("HTTP/") && fields[1].matches("[1-9][0-9][0-9]")
                ? Integer.parseInt(fields[1])
                : -1;
    }

    private void inside(String... command) throws IOException, InterruptedException {
        List<String> full = new ArrayList<>(exec());
        full.addAll(List.of(command));
        run(full.toArray(String[]::new));
    }

    private void run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + out);
        }
    }

    @Override
    public void close() throws InterruptedException {
        try {
            // Deleting one end of a veth pair deletes the other; the namespace's deletion alone was seen to leave
            // the host's end behind.
            run("ip", "link", "del", hostLink);
        } catch (IOException e) {
            System.out.println("link " + hostLink + " not removed: " + e.getMessage());
        }
        try {
            run("ip", "netns", "del", name);
        } catch (IOException e) {
            System.out.println("network namespace " + name + " not removed: " + e.getMessage());
        }
    }
}
