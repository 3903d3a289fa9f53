package dev.settle.runtime.isolation;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;

/**
 * The checks an uploaded JAR passes before any of its classes is loaded, beyond those every handler JAR passes
 * ({@link HandlerLoader}: a real zip, the services file, the class, its constructor): no entry name that climbs out
 * of the archive ({@code ..}) or starts at the root ({@code /}), the zip-slip of CVE-2024-27317. Settle never
 * unpacks a JAR, so such a name could do no harm here; it is refused because nothing a build tool writes has one,
 * so it marks a JAR made to attack whatever unpacks it next.
 */
public final class UploadedJar {
    /** The most entries an uploaded JAR may hold (a JAR named by the manifest may hold more). */
    public static final int MAX_ENTRIES = 10_000;

    private static final int NAMES_LISTED = 5;

    private UploadedJar() {}

    /**
     * The names that climb out of the archive or start at its root, as problems a person can act on; empty when
     * there are none, or when {@code jar} is not a zip at all (the loader says so).
     */
    public static List<String> entryNameProblems(Path jar) {
        List<String> bad = new ArrayList<>();
        int count = 0;
        try (ZipFile zip = new ZipFile(jar.toFile())) {
            Enumeration<? extends ZipEntry> entries = zip.entries();
            // The central directory only: nothing is inflated to read names.
            while (entries.hasMoreElements() && count++ <= MAX_ENTRIES) {
                String name = entries.nextElement().getName();
                if (climbsOut(name)) {
                    bad.add(name);
                }
            }
        } catch (ZipException e) {
            return List.of();
        } catch (IOException e) {
            return List.of("the uploaded JAR cannot be read: " + e.getMessage());
        }
        if (bad.isEmpty()) {
            return List.of();
        }
        List<String> shown = bad.subList(0, Math.min(NAMES_LISTED, bad.size()));
        return List.of(bad.size() + " entr" + (bad.size() == 1 ? "y has a name" : "ies have names")
                + " with '..' or a leading '/' ("
                + String.join(", ", shown.stream().map(name -> "'" + name + "'").toList())
                + (bad.size() > shown.size() ? ", ..." : "")
                + "); a JAR built by Maven or Gradle has none: rebuild it");
    }

    static boolean climbsOut(String name) {
        String slashed = name.replace('\\', '/');
        if (slashed.startsWith("/") || (slashed.length() > 1 && slashed.charAt(1) == ':')) {
            return true;
        }
        for (String part : slashed.split("/", -1)) {
            if (part.equals("..")) {
                return true;
            }
        }
        return false;
    }
}
