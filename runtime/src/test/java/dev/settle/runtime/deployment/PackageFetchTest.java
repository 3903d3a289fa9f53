package dev.settle.runtime.deployment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.manifest.PackageRef;
import dev.settle.runtime.manifest.PulsarSettings;
import dev.settle.testbroker.Waits;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A package server that misbehaves (a trickle, too many bytes, a forged log line in its error) and a cache someone
 * else could write: none of them runs code or hangs the start. The server is a raw socket of the test's own, so it
 * can do what no broker does.
 */
class PackageFetchTest {
    private static final PackageRef REF =
            PackageRef.parse("function://public/default/orders@1").orElseThrow();

    @TempDir
    Path folder;

    private final AtomicInteger requests = new AtomicInteger();
    private ServerSocket server;

    @AfterEach
    void close() throws IOException {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aJarPlantedInACacheOthersCanWriteIsNotRunAndNothingIsFetched() throws Exception {
        Path cache = Files.createDirectory(folder.resolve("cache"));
        Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path jar = cache.resolve("function/public/default/orders/1.jar");
        Files.createDirectories(jar.getParent());
        Files.write(jar, new byte[] {1, 2, 3});
        Files.writeString(jar.resolveSibling("1.jar.sha256"), PackageFetch.sha256(jar));
        serve(socket -> answer(socket, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"));

        assertThatThrownBy(() -> PackageFetch.fetch(settings(cache, 1024 * 1024, Duration.ofSeconds(5)), REF, jar))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("pulsar.packageCache '" + cache + "' is writable by others (rwxrwxrwx)");
        assertThat(requests).hasValue(0);
    }

    @Test
    void aServerThatTricklesItsAnswerIsCutOffAtThePackageTimeout() throws Exception {
        serve(socket -> {
            OutputStream out = socket.getOutputStream();
            out.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            for (int i = 0; i < 100; i++) {
                out.write('x');
                out.flush();
                Waits.pause(Duration.ofMillis(200), "the trickle's pace: a byte every 200 ms");
            }
        });
        Path cache = folder.resolve("cache");
        long began = System.nanoTime();

        assertThatThrownBy(
                        () -> PackageFetch.fetch(settings(cache, 1024 * 1024, Duration.ofSeconds(1)), REF, jar(cache)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not done within pulsar.packageTimeout (1s");
        assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(Duration.ofSeconds(5));
        assertThat(jar(cache)).doesNotExist();
    }

    @Test
    void aPackageLargerThanTheCapIsRefusedAndNotKept() throws Exception {
        // No Content-Length: only the bytes counted can tell.
        serve(socket -> answer(socket, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + "x".repeat(8192)));
        Path cache = folder.resolve("cache");

        assertThatThrownBy(() -> PackageFetch.fetch(settings(cache, 4096, Duration.ofSeconds(5)), REF, jar(cache)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("is larger than pulsar.packageMaxSize (4096 bytes");
        assertThat(jar(cache)).doesNotExist();
        try (var files = Files.list(jar(cache).getParent())) {
            assertThat(files).as("no part file left").isEmpty();
        }
    }

    @Test
    void aServersErrorTextIsEscapedSoItCannotForgeALogLine() throws Exception {
        String body = "gone\n01:00:00.000 INFO  [main] d.s.r.Settle - \u001b[32mall is well\u001b[0m";
        serve(socket -> answer(
                socket,
                "HTTP/1.1 404 Not Found\r\nContent-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n"
                        + body));
        Path cache = folder.resolve("cache");

        assertThatThrownBy(() -> PackageFetch.fetch(settings(cache, 4096, Duration.ofSeconds(5)), REF, jar(cache)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("answered 404 (gone\\n01:00:00.000 INFO  [main] d.s.r.Settle -"
                        + " \\u001b[32mall is well\\u001b[0m)")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n", "\u001b"));
    }

    private static Path jar(Path cache) {
        return cache.resolve("function/public/default/orders/1.jar");
    }

    private PulsarSettings settings(Path cache, long maxSize, Duration timeout) {
        return new PulsarSettings(
                "pulsar://localhost:6650",
                Optional.empty(),
                PulsarSettings.Tls.defaults(),
                Optional.of("http://127.0.0.1:" + server.getLocalPort()),
                cache,
                maxSize,
                timeout);
    }

    private interface Answer {
        void write(Socket socket) throws Exception;
    }

    private void serve(Answer answer) throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread thread = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket socket = server.accept()) {
                    requests.incrementAndGet();
                    readHead(socket);
                    answer.write(socket);
                } catch (Exception e) {
                    // The client hung up, or the test is over.
                }
            }
        });
        thread.setDaemon(true);
        thread.start();
    }

    private static void readHead(Socket socket) throws IOException {
        var in = socket.getInputStream();
        int matched = 0;
        byte[] end = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        while (matched < end.length) {
            int read = in.read();
            if (read < 0) {
                return;
            }
            matched = read == end[matched] ? matched + 1 : (read == '\r' ? 1 : 0);
        }
    }

    private static void answer(Socket socket, String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        socket.getOutputStream().flush();
    }
}
