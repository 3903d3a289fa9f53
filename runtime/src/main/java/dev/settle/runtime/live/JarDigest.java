package dev.settle.runtime.live;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/** The sha256 of a handler location: of a JAR's bytes, or of a folder's {@code *.jar} names and bytes in order. */
public final class JarDigest {
    private JarDigest() {}

    public static String of(Path jarOrFolder) throws IOException {
        MessageDigest digest = sha256();
        if (Files.isDirectory(jarOrFolder)) {
            List<Path> jars;
            try (Stream<Path> files = Files.list(jarOrFolder)) {
                jars = files.filter(Files::isRegularFile)
                        .filter(path -> path.getFileName().toString().endsWith(".jar"))
                        .sorted()
                        .toList();
            }
            for (Path jar : jars) {
                digest.update(jar.getFileName().toString().getBytes(StandardCharsets.UTF_8));
                digest.update((byte) 0);
                update(digest, jar);
            }
        } else {
            update(digest, jarOrFolder);
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private static void update(MessageDigest digest, Path file) throws IOException {
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = Files.newInputStream(file)) {
            for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                digest.update(buffer, 0, read);
            }
        }
    }
}
