package dev.settle.runtime.cli;

import dev.settle.runtime.manifest.ManifestLoader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchService;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a manifest file and says when its content changed. The folder is watched, not the file: an editor
 * replaces the file, and Kubernetes updates a mounted ConfigMap by pointing its {@code ..data} symlink at a new
 * folder, so the file's own inode never changes. Every event in the folder (and, in case an event is missed, every
 * {@link #POLL}) the file is read through its symlinks and compared by sha256 with what was last seen: a touch
 * changes nothing, a change of content is reported once.
 */
final class ManifestWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ManifestWatcher.class);
    /** How often the content is compared even without an event. */
    static final long POLL = TimeUnit.SECONDS.toMillis(2);
    /** Events of one edit come in a burst: the file is read once the folder is quiet this long. */
    private static final long SETTLE_MILLIS = 100;

    private final Path file;
    private final Runnable changed;
    private final WatchService watch;
    private final Thread thread;
    private byte[] seen;
    private volatile boolean closed;

    private ManifestWatcher(Path file, byte[] loaded, Runnable changed) throws IOException {
        this.file = file.toAbsolutePath();
        this.changed = changed;
        this.seen = loaded;
        this.watch = FileSystems.getDefault().newWatchService();
        this.file
                .getParent()
                .register(
                        watch,
                        StandardWatchEventKinds.ENTRY_CREATE,
                        StandardWatchEventKinds.ENTRY_MODIFY,
                        StandardWatchEventKinds.ENTRY_DELETE);
        this.thread = new Thread(this::loop, "settle-manifest-watch");
        thread.setDaemon(true);
    }

    /**
     * Starts watching; {@code changed} runs on the watcher's thread each time the content changes, the first time
     * at once if it is no longer {@code loaded} (it changed while the runtime started).
     *
     * @param loaded the sha256 of the content the running manifest was read from, {@link #digest(Path)}
     */
    static ManifestWatcher start(Path file, byte[] loaded, Runnable changed) throws IOException {
        ManifestWatcher watcher = new ManifestWatcher(file, loaded, changed);
        watcher.thread.start();
        return watcher;
    }

    private void loop() {
        try {
            for (boolean first = true; !closed; first = false) {
                var key = first ? null : watch.poll(POLL, TimeUnit.MILLISECONDS);
                if (key != null) {
                    // Let the rest of the edit's events arrive, then take them all.
                    Thread.sleep(SETTLE_MILLIS);
                    key.pollEvents();
                    key.reset();
                    for (var more = watch.poll(); more != null; more = watch.poll()) {
                        more.pollEvents();
                        more.reset();
                    }
                }
                byte[] now = digest(file);
                if (now != null && !Arrays.equals(now, seen)) {
                    seen = now;
                    log.info("manifest {} changed: reloading", file);
                    try {
                        changed.run();
                    } catch (RuntimeException e) {
                        // One failed reload must not end the watch: the next edit may mend it.
                        log.error("reloading manifest {} failed; still watching it", file, e);
                    }
                }
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            // Closed.
        } catch (RuntimeException | Error e) {
            log.error("watching manifest {} failed; changes are no longer picked up (SIGHUP still reloads)", file, e);
        }
    }

    /**
     * The sha256 of the file's first {@link ManifestLoader#MAX_BYTES} + 1 bytes, through its symlinks; null while
     * it cannot be read (mid-swap, say) or is not a regular file. A FIFO would block the read for ever and a link
     * to {@code /dev/zero} would fill the heap; a file over the limit still changes the digest, and the reload
     * then refuses it with the loader's message.
     */
    static byte[] digest(Path file) {
        if (!Files.isRegularFile(file)) {
            return null;
        }
        try (InputStream in = Files.newInputStream(file)) {
            return MessageDigest.getInstance("SHA-256").digest(in.readNBytes(ManifestLoader.MAX_BYTES + 1));
        } catch (IOException e) {
            return null;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            watch.close();
        } catch (IOException e) {
            log.warn("closing the watch of manifest {} failed", file, e);
        }
    }
}
