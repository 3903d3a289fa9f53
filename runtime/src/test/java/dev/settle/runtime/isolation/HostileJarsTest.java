package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.zip.Deflater;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * JARs made to hurt the loader: a zip bomb, a header that lies about sizes, a named pipe, a class that never
 * finishes initialising. Each is refused with a message, in bounded time and memory.
 */
class HostileJarsTest {

    private static final int KIB = 1024;
    private static final int MIB = 1024 * KIB;
    private static final String ACK = "public Outcome handle(Delivery<String> d) { return Outcome.ack(); }";

    @TempDir
    Path dir;

    private static String handler(String className, String body) {
        return "package com.acme.hostile;\nimport dev.settle.sdk.*;\npublic class " + className
                + " implements Handler<String> {\n" + body + "\n" + ACK + "\n}\n";
    }

    private HandlerLoadException refusal(HandlerLoader loader, Path jar, Optional<String> className) {
        try (loader) {
            Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(() -> loader.load(jar, className));
            assertThat(thrown).isInstanceOf(HandlerLoadException.class);
            return (HandlerLoadException) thrown;
        }
    }

    @Test
    void aStaticInitialiserThatNeverReturnsIsRefusedAtTheDeadline() {
        Path jar = TestJar.at(dir.resolve("stuck.jar"))
                .source(
                        "com.acme.hostile.Stuck",
                        handler(
                                "Stuck",
                                "static { while (!Boolean.getBoolean(\"never.set\")) { Thread.onSpinWait(); } }"))
                .services("com.acme.hostile.Stuck")
                .build();

        long started = System.nanoTime();
        HandlerLoadException refused =
                refusal(new HandlerLoader(JarLimits.DEFAULT, Duration.ofMillis(500)), jar, Optional.empty());
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(refused)
                .hasMessage(jar + ": handler com.acme.hostile.Stuck did not finish running its static"
                        + " initialiser within 500ms; it may wait for a lock, the network or input that never comes. Keep"
                        + " its static initialiser and constructor quick, and connect to what it needs in open()");
        assertThat(took).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void aConstructorThatNeverReturnsIsRefusedAtTheDeadlineOnADaemonThread() {
        Path jar = TestJar.at(dir.resolve("waits.jar"))
                .source(
                        "com.acme.hostile.Waits",
                        handler(
                                "Waits",
                                "public Waits() throws Exception { new java.util.concurrent.CountDownLatch(1).await();"
                                        + " throw new IllegalStateException(\"interrupted\"); }"))
                .services("com.acme.hostile.Waits")
                .build();

        HandlerLoadException refused =
                refusal(new HandlerLoader(JarLimits.DEFAULT, Duration.ofMillis(300)), jar, Optional.empty());

        assertThat(refused)
                .hasMessageStartingWith(
                        jar + ": handler com.acme.hostile.Waits did not finish" + " constructing it within 300ms;");
        assertThat(Thread.getAllStackTraces().keySet())
                .filteredOn(thread -> thread.getName().equals("settle-load-com.acme.hostile.Waits"))
                .allSatisfy(thread -> assertThat(thread.isDaemon()).isTrue());
    }

    @Test
    void theDefaultDeadlineIsThirtySeconds() {
        assertThat(HandlerLoader.LOAD_DEADLINE).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void aNamedPipeIsRefusedWithoutBeingOpened() throws Exception {
        Path pipe = dir.resolve("handler.jar");
        Process mkfifo = new ProcessBuilder("mkfifo", pipe.toString()).start();
        assertThat(mkfifo.waitFor()).isZero();

        long started = System.nanoTime();
        HandlerLoadException refused = refusal(new HandlerLoader(), pipe, Optional.empty());

        assertThat(refused)
                .hasMessage("handler JAR " + pipe + " is neither a regular file nor a folder (a named"
                        + " pipe, socket or device?); point the manifest's jar at the JAR your build produces, or at a"
                        + " folder of JARs");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void aClassEntryPastTheLimitIsRefusedNamingTheJarAndTheEntry() throws IOException {
        Path jar = bomb(dir.resolve("bomb.jar"), "com/acme/hostile/Bomb.class", 2 * MIB, Optional.empty());

        HandlerLoadException refused =
                refusal(new HandlerLoader(new JarLimits(MIB, 100), Duration.ofSeconds(30)), jar, Optional.empty());

        assertThat(refused)
                .hasMessage("handler JAR " + jar + ": entry com/acme/hostile/Bomb.class inflates to more"
                        + " than 1 MiB (its zip header claims 2097152 bytes), the most Settle reads of one class or resource;"
                        + " it looks like a zip bomb, not a build output: rebuild the JAR from its sources");
    }

    @Test
    void aHeaderThatUnderstatesTheSizeDoesNotGetAnEntryPastTheLimit() throws IOException {
        Path jar = bomb(dir.resolve("liar.jar"), "com/acme/hostile/Bomb.class", 2 * MIB, Optional.of(100));

        HandlerLoadException refused =
                refusal(new HandlerLoader(new JarLimits(MIB, 100), Duration.ofSeconds(30)), jar, Optional.empty());

        assertThat(refused)
                .hasMessageContaining("handler JAR " + jar + ": entry com/acme/hostile/Bomb.class"
                        + " inflates to more than 1 MiB (its zip header claims 100 bytes)");
    }

    /** The defect as found: a gigabyte behind a header that claims a kilobyte, under the default limits. */
    @Test
    void aGigabyteClassClaimingAKilobyteIsRefusedWithTheDefaultLimits() throws IOException {
        Path jar = bomb(dir.resolve("gigabyte.jar"), "com/acme/hostile/Bomb.class", 1024 * MIB, Optional.of(KIB));
        assertThat(Files.size(jar)).isLessThan(8L * MIB);

        HandlerLoadException refused = refusal(new HandlerLoader(), jar, Optional.empty());

        assertThat(refused)
                .hasMessageContaining("handler JAR " + jar + ": entry com/acme/hostile/Bomb.class"
                        + " inflates to more than 64 MiB (its zip header claims 1024 bytes)");
    }

    @Test
    void aServicesFilePastTheLimitIsRefused() throws IOException {
        Path jar =
                bomb(dir.resolve("services-bomb.jar"), HandlerLoadException.SERVICES_FILE, 2 * MIB, Optional.empty());

        HandlerLoadException refused =
                refusal(new HandlerLoader(new JarLimits(MIB, 100), Duration.ofSeconds(30)), jar, Optional.empty());

        assertThat(refused)
                .hasMessageStartingWith("handler JAR " + jar + ": entry " + HandlerLoadException.SERVICES_FILE
                        + " inflates to more than 1 MiB");
    }

    @Test
    void aJarWithTooManyEntriesIsRefused() throws IOException {
        Path jar = dir.resolve("crowded.jar");
        try (ZipOutputStream zip = new ZipOutputStream(Files.newOutputStream(jar))) {
            for (int i = 0; i < 11; i++) {
                zip.putNextEntry(new ZipEntry("r" + i + ".txt"));
                zip.closeEntry();
            }
        }

        HandlerLoadException refused =
                refusal(new HandlerLoader(new JarLimits(MIB, 10), Duration.ofSeconds(30)), jar, Optional.empty());

        assertThat(refused)
                .hasMessage("handler JAR " + jar + ": has 11 entries, more than the 10 Settle reads; it"
                        + " looks like a zip bomb, not a build output: rebuild the JAR from its sources");
    }

    @Test
    void aResourceStreamStopsAtTheLimit() throws Exception {
        Path library = bomb(dir.resolve("library.jar"), "big.bin", 2 * MIB, Optional.of(10));
        Path folder = Files.createDirectory(dir.resolve("with-library"));
        Files.copy(library, folder.resolve("library.jar"));
        TestJar.at(folder.resolve("handler.jar"))
                .source("com.acme.hostile.Plain", handler("Plain", ""))
                .services("com.acme.hostile.Plain")
                .build();

        try (HandlerLoader loader = new HandlerLoader(new JarLimits(MIB, 100), Duration.ofSeconds(30))) {
            ClassLoader handlerLoader = loader.load(folder, Optional.empty()).classLoader();
            try (var in = handlerLoader.getResourceAsStream("big.bin")) {
                assertThatThrownBy(in::readAllBytes)
                        .isInstanceOf(IOException.class)
                        .hasMessage(folder.resolve("library.jar") + ": entry big.bin inflates to more than 1048576"
                                + " bytes");
            }
        }
    }

    @Test
    void aHandlerDeclaredInTwoJarsOfAFolderIsRefusedNamingBoth() throws IOException {
        Path folder = Files.createDirectory(dir.resolve("two-copies"));
        for (String name : new String[] {"orders-1.0.jar", "orders-1.1.jar"}) {
            TestJar.at(folder.resolve(name))
                    .source("com.acme.hostile.Orders", handler("Orders", ""))
                    .services("com.acme.hostile.Orders")
                    .build();
        }

        HandlerLoadException refused = refusal(new HandlerLoader(), folder, Optional.of("com.acme.hostile.Orders"));

        assertThat(refused)
                .hasMessage(folder + ": handler com.acme.hostile.Orders is declared in 2 JARs:"
                        + " orders-1.0.jar, orders-1.1.jar; keep one copy of the handler's JAR in the folder");
        assertThat(refusal(new HandlerLoader(), folder, Optional.empty())).hasMessage(refused.getMessage());
    }

    /**
     * A JAR (declaring {@code com.acme.hostile.Bomb} when the entry is a class) whose {@code entry} is {@code size} zero bytes, deflated; with
     * {@code claimed}, the central directory says the entry is that many bytes instead.
     */
    private static Path bomb(Path jar, String entry, int size, Optional<Integer> claimed) throws IOException {
        try (OutputStream file = Files.newOutputStream(jar);
                ZipOutputStream zip = new ZipOutputStream(file)) {
            zip.setLevel(Deflater.BEST_COMPRESSION);
            if (entry.endsWith(".class")) {
                zip.putNextEntry(new ZipEntry(HandlerLoadException.SERVICES_FILE));
                zip.write("com.acme.hostile.Bomb\n".getBytes(StandardCharsets.UTF_8));
                zip.closeEntry();
            }
            zip.putNextEntry(new ZipEntry(entry));
            byte[] zeros = new byte[MIB];
            for (int written = 0; written < size; written += zeros.length) {
                zip.write(zeros, 0, Math.min(zeros.length, size - written));
            }
            zip.closeEntry();
        }
        if (claimed.isPresent()) {
            understate(jar, entry, claimed.get());
        }
        return jar;
    }

    /** Rewrites the uncompressed size of {@code entry} in the central directory, where ZipFile reads it. */
    private static void understate(Path jar, String entry, int claimed) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(jar)).order(ByteOrder.LITTLE_ENDIAN);
        byte[] name = entry.getBytes(StandardCharsets.UTF_8);
        for (int at = bytes.limit() - 46; at >= 0; at--) {
            if (bytes.getInt(at) != 0x02014b50 || bytes.getShort(at + 28) != name.length) {
                continue;
            }
            byte[] found = new byte[name.length];
            bytes.get(at + 46, found);
            if (java.util.Arrays.equals(found, name)) {
                bytes.putInt(at + 24, claimed);
                Files.write(jar, bytes.array());
                return;
            }
        }
        throw new IllegalStateException("no central directory header for " + entry);
    }
}
