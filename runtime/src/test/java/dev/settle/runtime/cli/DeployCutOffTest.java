package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code settle deploy} against an API that cuts the upload off (what the runtime does, after a few seconds of
 * reading it away, to a JAR over its size limit): the error says what was being sent and the likeliest reason.
 */
class DeployCutOffTest {
    @Test
    void anUploadCutOffSaysItsSizeAndTheSizeLimit(@TempDir Path folder) throws Exception {
        Path jar = Files.write(folder.resolve("handler.jar"), new byte[8 * 1024 * 1024]);
        Path token = Files.writeString(folder.resolve("token"), "a-token");
        try (ServerSocket admin = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Thread api = new Thread(() -> cutOff(admin));
            api.setDaemon(true);
            api.start();
            SettleCommand settle = new SettleCommand();

            int exit = settle.run(
                    "deploy",
                    jar.toString(),
                    "--subscription",
                    "orders",
                    "--admin",
                    "http://127.0.0.1:" + admin.getLocalPort(),
                    "--token-file",
                    token.toString());

            assertThat(exit).as(settle.err()).isEqualTo(AdminClient.UNREACHABLE);
            assertThat(settle.err())
                    .contains("failed while sending 8388608 bytes")
                    .contains("admin.maxJarSize (104857600 bytes unless its manifest says otherwise)");
        }
    }

    /** Reads the head and resets the connection with the body unread, as a refusal whose answer was lost looks. */
    private static void cutOff(ServerSocket admin) {
        try (Socket client = admin.accept()) {
            byte[] head = new byte[4096];
            int read = client.getInputStream().read(head);
            assertThat(new String(head, 0, Math.max(read, 0), StandardCharsets.US_ASCII))
                    .startsWith("PUT ");
            // The answer a reset loses never reaches the client: none is written.
            client.setSoLinger(true, 0);
        } catch (IOException e) {
            // The client went first: the test's assertions say whether that is right.
        }
    }
}
