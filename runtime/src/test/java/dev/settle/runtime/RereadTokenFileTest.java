package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

class RereadTokenFileTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @TempDir
    Path folder;

    private final AtomicLong now = new AtomicLong(1_000 * SECOND);
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private Path file;

    @BeforeEach
    void listen() throws IOException {
        file = folder.resolve("token");
        Files.writeString(file, "first\n");
        logged.start();
        ((Logger) LoggerFactory.getLogger(RereadTokenFile.class)).addAppender(logged);
    }

    @AfterEach
    void stopListening() {
        ((Logger) LoggerFactory.getLogger(RereadTokenFile.class)).detachAppender(logged);
    }

    /** As a sidecar or a Kubernetes secret update does it: a new file moved into place. */
    private void replace(String token) throws IOException {
        Path next = folder.resolve("token.next");
        Files.writeString(next, token);
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    @Test
    void aReplacedTokenFileIsReadAtTheFirstCheckASecondLater() throws IOException {
        RereadTokenFile token = RereadTokenFile.open(file, now::get);
        assertThat(token.get()).isEqualTo("first");

        replace("second");
        now.addAndGet(SECOND);

        assertThat(token.get()).isEqualTo("second");
    }

    @Test
    void theFileIsNotLookedAtAgainWithinASecond() throws IOException {
        RereadTokenFile token = RereadTokenFile.open(file, now::get);
        replace("second");

        now.addAndGet(SECOND - 1);

        assertThat(token.get()).isEqualTo("first");
        now.addAndGet(1);
        assertThat(token.get()).isEqualTo("second");
    }

    @Test
    void aFileWhoseTimeSizeAndInodeAreUnchangedIsNotReadAgain() throws IOException {
        RereadTokenFile token = RereadTokenFile.open(file, now::get);
        // Rewritten in place to the same size, its modification time put back: only a read would notice.
        FileTime modified = Files.getLastModifiedTime(file);
        Files.writeString(file, "other\n");
        Files.setLastModifiedTime(file, modified);

        now.addAndGet(5 * SECOND);

        assertThat(token.get()).isEqualTo("first");
        assertThat(logged.list).isEmpty();
    }

    @Test
    void aFileThatCannotBeReadKeepsTheLastTokenAndIsLoggedOnceUntilItCanBeReadAgain() throws IOException {
        RereadTokenFile token = RereadTokenFile.open(file, now::get);
        Files.delete(file);
        for (int i = 0; i < 3; i++) {
            now.addAndGet(SECOND);
            assertThat(token.get()).isEqualTo("first");
        }
        assertThat(logged.list).hasSize(1);
        assertThat(logged.list.get(0).getLevel()).isEqualTo(Level.WARN);
        assertThat(logged.list.get(0).getFormattedMessage())
                .contains(file.toString(), NoSuchFileException.class.getName(), "keeping the last token");

        Files.writeString(file, "third");
        now.addAndGet(SECOND);

        assertThat(token.get()).isEqualTo("third");
        assertThat(logged.list).hasSize(3);
        assertThat(logged.list.get(1).getFormattedMessage()).contains("can be read again");
    }

    @Test
    void anEmptyFileCaughtHalfWrittenKeepsTheLastToken() throws IOException {
        RereadTokenFile token = RereadTokenFile.open(file, now::get);
        Files.writeString(file, "  \n");
        now.addAndGet(SECOND);

        assertThat(token.get()).isEqualTo("first");
        assertThat(logged.list).hasSize(1);
        assertThat(logged.list.get(0).getFormattedMessage()).contains("the file is empty");
    }

    @Test
    void aMissingFileAtStartIsAnError() {
        assertThatThrownBy(() -> RereadTokenFile.open(folder.resolve("absent"), now::get))
                .isInstanceOf(NoSuchFileException.class);
    }
}
