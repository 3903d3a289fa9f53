package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UploadedJarTest {
    @TempDir
    Path folder;

    @Test
    void namesThatClimbOutOrStartAtTheRootAreRefused() {
        assertThat(UploadedJar.climbsOut("../evil")).isTrue();
        assertThat(UploadedJar.climbsOut("a/../../evil")).isTrue();
        assertThat(UploadedJar.climbsOut("a\\..\\evil")).isTrue();
        assertThat(UploadedJar.climbsOut("/etc/passwd")).isTrue();
        assertThat(UploadedJar.climbsOut("\\windows\\evil")).isTrue();
        assertThat(UploadedJar.climbsOut("C:/evil")).isTrue();
    }

    @Test
    void namesABuildToolWritesAreAccepted() {
        assertThat(UploadedJar.climbsOut("META-INF/MANIFEST.MF")).isFalse();
        assertThat(UploadedJar.climbsOut("com/acme/Order.class")).isFalse();
        assertThat(UploadedJar.climbsOut("com/acme/..Dots.class")).isFalse();
        assertThat(UploadedJar.climbsOut("a/b/")).isFalse();
    }

    @Test
    void everyBadNameIsListedInOneProblem() throws Exception {
        Path jar = folder.resolve("bad.jar");
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream zip = new JarOutputStream(out)) {
            for (String name : new String[] {"ok.txt", "../one", "/two", "x/../../three"}) {
                zip.putNextEntry(new JarEntry(name));
                zip.closeEntry();
            }
        }
        assertThat(UploadedJar.entryNameProblems(jar))
                .singleElement()
                .asString()
                .startsWith("3 entries have names with '..' or a leading '/' ('../one', '/two', 'x/../../three')");
    }

    @Test
    void aFileThatIsNotAZipIsLeftForTheLoaderToName() throws Exception {
        Path jar = folder.resolve("junk.jar");
        Files.writeString(jar, "not a zip");
        assertThat(UploadedJar.entryNameProblems(jar)).isEmpty();
    }

    @Test
    void eachLoadHasAClassLoaderOfItsOwnAndReleasingOneLeavesTheOthersWorking() throws Exception {
        Path jar = TestJar.orderHandler(folder.resolve("orders.jar"));
        try (HandlerLoader loader = new HandlerLoader()) {
            LoadedHandler first = loader.load(jar, java.util.Optional.empty());
            LoadedHandler second = loader.load(jar, java.util.Optional.empty());
            // One loader per subscription and generation: their classes, and so their statics, are their own.
            assertThat(second.classLoader()).isNotSameAs(first.classLoader());
            assertThat(second.handler().getClass()).isNotSameAs(first.handler().getClass());
            loader.release(first);
            assertThat(Class.forName("com.acme.orders.Order", false, second.classLoader()))
                    .isNotNull();
            assertThat(second.classLoader().getResourceAsStream("com/acme/orders/Order.class"))
                    .isNotNull();
        }
    }

    @Test
    void anUploadLoaderRefusesMoreThanTenThousandEntries() throws Exception {
        Path jar = folder.resolve("many.jar");
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream zip = new JarOutputStream(out)) {
            for (int i = 0; i <= UploadedJar.MAX_ENTRIES; i++) {
                zip.putNextEntry(new JarEntry("r/" + i));
                zip.closeEntry();
            }
        }
        try (HandlerLoader loader = HandlerLoader.forUploads()) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> loader.load(jar, java.util.Optional.empty()))
                    .isInstanceOf(HandlerLoadException.class)
                    .hasMessageContaining("10000");
        }
    }
}
