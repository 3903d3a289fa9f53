package dev.settle.runtime.manifest;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;
import java.util.Set;

/**
 * A folder whose contents the runtime trusts without checking them again (the package cache, whose verified JARs
 * run without a fetch; {@code admin.dataDir}, whose generations run at start) must be the runtime user's own: not a
 * symbolic link (its target could change under us), owned by this process's user, and writable by nobody else, or
 * another local user could plant a JAR in it (issue 32). Created {@code 0700} when missing.
 */
public final class OwnedFolder {
    private static final Set<PosixFilePermission> WRITABLE_BY_OTHERS =
            Set.of(PosixFilePermission.GROUP_WRITE, PosixFilePermission.OTHERS_WRITE);

    private OwnedFolder() {}

    /**
     * What is wrong with {@code folder} as the {@code setting}'s folder, if anything; nothing when it does not exist
     * yet (it is then created by {@link #create}).
     */
    public static Optional<String> problem(Path folder, String setting) {
        return problem(folder, setting, processUid());
    }

    static Optional<String> problem(Path folder, String setting, Optional<Integer> uid) {
        if (Files.isSymbolicLink(folder)) {
            String target;
            try {
                target = Files.readSymbolicLink(folder).toString();
            } catch (IOException e) {
                target = "?";
            }
            return Optional.of(setting + " '" + folder + "' is a symbolic link (to '" + target + "'); name the real"
                    + " folder, one this user owns and alone can write (chmod 700)");
        }
        if (!Files.exists(folder, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.empty();
        }
        if (!Files.isDirectory(folder, LinkOption.NOFOLLOW_LINKS)) {
            return Optional.of(setting + " '" + folder + "' is not a folder; name a folder (it is created if missing)");
        }
        if (!posix()) {
            return Optional.empty();
        }
        try {
            int owner = (Integer) Files.getAttribute(folder, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            if (uid.isPresent() && owner != uid.get()) {
                return Optional.of(setting + " '" + folder + "' is owned by uid " + owner + ", not by this process's"
                        + " user (uid " + uid.get() + "), who could not tell its files from planted ones; name a"
                        + " folder of this user's own, or chown it to uid " + uid.get());
            }
            Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(folder, LinkOption.NOFOLLOW_LINKS);
            if (permissions.stream().anyMatch(WRITABLE_BY_OTHERS::contains)) {
                return Optional.of(setting + " '" + folder + "' is writable by others ("
                        + PosixFilePermissions.toString(permissions) + "), who could plant a JAR in it; run"
                        + " chmod go-w '" + folder + "' (700 is best), or name a folder of this user's own");
            }
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return Optional.of(setting + " '" + folder + "': cannot read its owner and permissions (" + e + ")");
        }
        return Optional.empty();
    }

    /**
     * Creates {@code folder} (and missing parents) {@code 0700} when missing, then checks it.
     *
     * @throws IOException saying what is wrong and what to do
     */
    public static void create(Path folder, String setting) throws IOException {
        if (!Files.exists(folder, LinkOption.NOFOLLOW_LINKS) && !Files.isSymbolicLink(folder)) {
            try {
                if (posix()) {
                    Files.createDirectories(
                            folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                } else {
                    Files.createDirectories(folder);
                }
            } catch (IOException e) {
                throw new IOException(
                        "cannot create " + setting + " '" + folder + "' (" + e + "); set " + setting + " to a folder"
                                + " this user owns, such as a volume mounted for it",
                        e);
            }
        }
        Optional<String> problem = problem(folder, setting);
        if (problem.isPresent()) {
            throw new IOException(problem.get());
        }
    }

    private static boolean posix() {
        return FileSystems.getDefault().supportedFileAttributeViews().contains("unix");
    }

    /** This process's user, from the owner of {@code /proc/self} (Linux); empty where there is none. */
    private static Optional<Integer> processUid() {
        try {
            return Optional.of((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
