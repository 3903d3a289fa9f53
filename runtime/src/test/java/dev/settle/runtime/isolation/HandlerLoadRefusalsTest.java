package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every way a handler JAR is refused, each with its exact message. */
class HandlerLoadRefusalsTest {

    @TempDir
    static Path dir;

    /** One JAR declaring one handler for each way a declared class can be wrong. */
    static Path bad;

    static Path two;

    private final HandlerLoader loader = new HandlerLoader();

    @BeforeAll
    static void buildHandlerJars() throws IOException {
        Path library = TestJar.at(dir.resolve("library-not-bundled.jar"))
                .source("com.acme.lib.Base", "package com.acme.lib; public abstract class Base {}")
                .build();
        String ack = "public Outcome handle(Delivery<String> d) { return Outcome.ack(); }";
        bad = TestJar.at(dir.resolve("bad.jar"))
                .compiledAgainst(library)
                .source("com.acme.bad.NotAHandler", handler("public class NotAHandler", ""))
                .source(
                        "com.acme.bad.AbstractHandler",
                        handler("public abstract class AbstractHandler implements Handler<String>", ""))
                .source(
                        "com.acme.bad.Hidden",
                        handler("class Hidden implements Handler<String>", "public Hidden() {}\n" + ack))
                .source(
                        "com.acme.bad.NeedsArgs",
                        handler(
                                "public class NeedsArgs implements Handler<String>",
                                "public NeedsArgs(String url) {}\n" + ack))
                .source(
                        "com.acme.bad.StaticBoom",
                        handler(
                                "public class StaticBoom implements Handler<String>",
                                "static final String CONFIG = fail();\n"
                                        + "static String fail() { throw new IllegalStateException(\"no settle.conf\"); }\n"
                                        + ack))
                .source(
                        "com.acme.bad.ConstructorBoom",
                        handler(
                                "public class ConstructorBoom implements Handler<String>",
                                "public ConstructorBoom() { throw new IllegalArgumentException(\"bad default\"); }\n"
                                        + ack))
                .source(
                        "com.acme.bad.OpenBoom",
                        handler(
                                "public class OpenBoom implements Handler<String>",
                                "public void open(HandlerContext c) { throw new IllegalStateException(\"no database\"); }\n"
                                        + ack))
                .source(
                        "com.acme.bad.Orphan",
                        handler("public class Orphan extends com.acme.lib.Base implements Handler<String>", ack))
                .services(
                        "com.acme.bad.Gone",
                        "com.acme.bad.NotAHandler",
                        "com.acme.bad.AbstractHandler",
                        "com.acme.bad.Hidden",
                        "com.acme.bad.NeedsArgs",
                        "com.acme.bad.StaticBoom",
                        "com.acme.bad.ConstructorBoom",
                        "com.acme.bad.OpenBoom",
                        "com.acme.bad.Orphan")
                .build();
        two = TestJar.at(dir.resolve("two.jar"))
                .source(
                        "com.acme.two.First",
                        "package com.acme.two;\nimport dev.settle.sdk.*;\n"
                                + "public class First implements Handler<String> {" + ack + "}")
                .source(
                        "com.acme.two.Second",
                        "package com.acme.two;\nimport dev.settle.sdk.*;\n"
                                + "public class Second implements Handler<String> {" + ack + "}")
                .services("com.acme.two.First", "com.acme.two.Second")
                .build();
    }

    private static String handler(String declaration, String body) {
        return "package com.acme.bad;\nimport dev.settle.sdk.*;\n" + declaration + " {\n" + body + "\n}\n";
    }

    @AfterEach
    void closeLoader() {
        loader.close();
    }

    @Test
    void aMissingJarIsRefused() {
        Path absent = dir.resolve("absent.jar");

        assertRefused(absent, Optional.empty())
                .hasMessage("handler JAR " + absent + " does not exist; build it, or correct the jar path in the"
                        + " manifest");
    }

    @Test
    void aTextFileIsNotAJar() throws IOException {
        Path notes = Files.writeString(dir.resolve("notes.jar"), "these are notes, not a JAR\n");

        assertRefused(notes, Optional.empty())
                .hasMessage(notes + " is not a JAR: it cannot be read as a zip archive; point the manifest's jar at"
                        + " the JAR your build produces")
                .hasCauseInstanceOf(java.util.zip.ZipException.class);
    }

    @Test
    void anEmptyFileIsNotAJar() throws IOException {
        Path empty = Files.createFile(dir.resolve("empty.jar"));

        assertRefused(empty, Optional.empty())
                .hasMessage(empty + " is not a JAR: it cannot be read as a zip archive; point the manifest's jar at"
                        + " the JAR your build produces");
    }

    @Test
    void aZipWithoutEntriesDeclaresNoHandler() throws IOException {
        // The 22-byte end-of-central-directory record alone: a valid, empty zip archive.
        byte[] emptyZip = new byte[22];
        emptyZip[0] = 0x50;
        emptyZip[1] = 0x4b;
        emptyZip[2] = 0x05;
        emptyZip[3] = 0x06;
        Path zip = Files.write(dir.resolve("nothing.jar"), emptyZip);

        assertRefused(zip, Optional.empty())
                .hasMessage(zip + " declares no handler in META-INF/services/dev.settle.sdk.Handler; add a line with"
                        + " your handler's class name");
    }

    @Test
    void aJarWithoutServicesFileDeclaresNoHandler() {
        Path plain = TestJar.at(dir.resolve("plain.jar"))
                .source(
                        "com.acme.plain.Forgotten",
                        "package com.acme.plain;\nimport dev.settle.sdk.*;\n"
                                + "public class Forgotten implements Handler<String> {"
                                + " public Outcome handle(Delivery<String> d) { return Outcome.ack(); } }")
                .build();

        assertRefused(plain, Optional.of("com.acme.plain.Forgotten"))
                .hasMessage(plain + " declares no handler in META-INF/services/dev.settle.sdk.Handler; add a line"
                        + " with your handler's class name");
    }

    @Test
    void aServicesFileWithOnlyCommentsDeclaresNoHandler() {
        Path commented = TestJar.at(dir.resolve("commented.jar"))
                .services("# com.acme.Disabled", "")
                .build();

        assertRefused(commented, Optional.empty())
                .hasMessage(commented + " declares no handler in META-INF/services/dev.settle.sdk.Handler; add a"
                        + " line with your handler's class name");
    }

    @Test
    void aFolderWhoseJarsDeclareNoHandlerListsThem() throws IOException {
        Path folder = Files.createDirectory(dir.resolve("libs-only"));
        TestJar.at(folder.resolve("b-lib.jar")).resource("b.txt", "b").build();
        TestJar.at(folder.resolve("a-lib.jar")).resource("a.txt", "a").build();

        assertRefused(folder, Optional.empty())
                .hasMessage(folder + " (a-lib.jar, b-lib.jar) declares no handler in"
                        + " META-INF/services/dev.settle.sdk.Handler; add a line with your handler's class name");
    }

    @Test
    void aFolderWithoutJarsIsRefused() throws IOException {
        Path folder = Files.createDirectory(dir.resolve("no-jars"));
        Files.writeString(folder.resolve("README.txt"), "the JAR is elsewhere");

        assertRefused(folder, Optional.empty())
                .hasMessage("handler folder " + folder + " contains no .jar files; put the handler's JAR and the"
                        + " JARs of its libraries there");
    }

    @Test
    void aFolderWithABrokenJarNamesThatJar() throws IOException {
        Path folder = Files.createDirectory(dir.resolve("one-broken"));
        Files.copy(two, folder.resolve("handler.jar"));
        Files.writeString(folder.resolve("lib.jar"), "not a zip");

        assertRefused(folder, Optional.empty())
                .hasMessage(folder.resolve("lib.jar") + " is not a JAR: it cannot be read as a zip archive; point the"
                        + " manifest's jar at the JAR your build produces");
    }

    @Test
    void aServicesLineThatIsNotAClassNameIsRefused() {
        Path garbled = TestJar.at(dir.resolve("garbled.jar"))
                .services("com.acme.First", "com.acme.Second com.acme.Third # two on a line")
                .build();

        assertRefused(garbled, Optional.empty())
                .hasMessage(garbled + ": line 2 of META-INF/services/dev.settle.sdk.Handler is not a class name:"
                        + " 'com.acme.Second com.acme.Third # two on a line'; write one fully qualified class name a"
                        + " line");
    }

    @Test
    void severalDeclaredAndNoneNamedListsThem() {
        assertRefused(two, Optional.empty())
                .hasMessage(two + " declares several handlers: com.acme.two.First, com.acme.two.Second; name one with"
                        + " handler: in the manifest");
    }

    @Test
    void aNamedHandlerThatIsNotDeclaredListsThoseDeclared() {
        assertRefused(two, Optional.of("com.acme.two.Third"))
                .hasMessage(two + " does not declare handler com.acme.two.Third; it declares com.acme.two.First,"
                        + " com.acme.two.Second. Name one of those, or add com.acme.two.Third to"
                        + " META-INF/services/dev.settle.sdk.Handler");
    }

    @Test
    void aDeclaredClassMissingFromTheJarIsRefused() {
        assertRefused(bad, Optional.of("com.acme.bad.Gone"))
                .hasMessage(bad + " declares handler com.acme.bad.Gone in META-INF/services/dev.settle.sdk.Handler,"
                        + " but has no class com.acme.bad.Gone; correct the services file or rebuild the JAR")
                .hasCauseInstanceOf(ClassNotFoundException.class);
    }

    @Test
    void aClassThatIsNotAHandlerIsRefused() {
        assertRefused(bad, Optional.of("com.acme.bad.NotAHandler"))
                .hasMessage(bad + " declares handler com.acme.bad.NotAHandler, but com.acme.bad.NotAHandler does not"
                        + " implement dev.settle.sdk.Handler; implement Handler<T>, or remove the line from"
                        + " META-INF/services/dev.settle.sdk.Handler");
    }

    @Test
    void anAbstractHandlerIsRefused() {
        assertRefused(bad, Optional.of("com.acme.bad.AbstractHandler"))
                .hasMessage(bad + ": handler com.acme.bad.AbstractHandler is abstract; declare a concrete class");
    }

    @Test
    void aHandlerClassThatIsNotPublicIsRefused() {
        assertRefused(bad, Optional.of("com.acme.bad.Hidden"))
                .hasMessage(bad + ": handler com.acme.bad.Hidden is not a public class; make it public (and top-level"
                        + " or static)");
    }

    @Test
    void aHandlerWithoutAPublicNoArgumentConstructorIsRefused() {
        assertRefused(bad, Optional.of("com.acme.bad.NeedsArgs"))
                .hasMessage(bad + ": handler com.acme.bad.NeedsArgs has no public no-argument constructor; add one,"
                        + " Settle creates the handler with it");
    }

    @Test
    void aStaticInitialiserThatThrowsIsRefusedWithItsCause() {
        assertRefused(bad, Optional.of("com.acme.bad.StaticBoom"))
                .hasMessage(bad + ": handler com.acme.bad.StaticBoom failed in its static initialiser:"
                        + " java.lang.IllegalStateException: no settle.conf")
                .hasCauseInstanceOf(IllegalStateException.class);
    }

    @Test
    void aConstructorThatThrowsIsRefusedWithItsCause() {
        assertRefused(bad, Optional.of("com.acme.bad.ConstructorBoom"))
                .hasMessage(bad + ": handler com.acme.bad.ConstructorBoom failed in its constructor:"
                        + " java.lang.IllegalArgumentException: bad default")
                .hasCauseInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aHandlerWhoseLibraryIsNotBundledIsRefused() {
        assertRefused(bad, Optional.of("com.acme.bad.Orphan"))
                .hasMessage(bad + ": handler com.acme.bad.Orphan cannot be loaded: java.lang.NoClassDefFoundError:"
                        + " com/acme/lib/Base; bundle the libraries it needs in its JAR, or load a folder with its JAR"
                        + " and theirs")
                .hasCauseInstanceOf(NoClassDefFoundError.class);
    }

    @Test
    void anOpenThatThrowsIsRefusedWithItsCause() throws Exception {
        LoadedHandler loaded = loader.load(bad, Optional.of("com.acme.bad.OpenBoom"));

        assertThatThrownBy(() -> loaded.open(HandlerLoaderTest.context("orders-processor")))
                .isInstanceOf(HandlerLoadException.class)
                .hasMessage(bad + ": handler com.acme.bad.OpenBoom failed to open for subscription orders-processor:"
                        + " java.lang.IllegalStateException: no database")
                .hasCauseInstanceOf(IllegalStateException.class);
    }

    @Test
    void everyRefusalNamesItsLocation() {
        assertThatThrownBy(() -> loader.load(two, Optional.empty()))
                .isInstanceOfSatisfying(
                        HandlerLoadException.class,
                        e -> assertThat(e.location())
                                .isEqualTo(two.toAbsolutePath().normalize()));
    }

    private AbstractThrowableAssert<?, ? extends Throwable> assertRefused(Path location, Optional<String> className) {
        return assertThatThrownBy(() -> loader.load(location, className)).isInstanceOf(HandlerLoadException.class);
    }
}
