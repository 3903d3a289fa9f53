package dev.settle.runtime.isolation;

import dev.settle.runtime.manifest.DurationText;
import dev.settle.runtime.manifest.UntrustedText;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * A handler JAR that cannot be loaded: the runtime refuses to start and prints {@link #getMessage()}.
 *
 * <p>Every message names the JAR (or folder of JARs), says what was found there and what to do. The wording is
 * fixed here, in one place, and tested exactly.
 *
 * <p><b>Supported API</b>: kept stable across releases (docs/design.md, "The supported API"), as
 * {@code SettleTestDriver.fromManifest} and {@code forFunction} throw it.
 */
public final class HandlerLoadException extends Exception {

    private static final long serialVersionUID = 1L;

    static final String SERVICES_FILE = "META-INF/services/dev.settle.sdk.Handler";
    /** Where a JAR declares its batch handlers (issue 47), read beside {@link #SERVICES_FILE}. */
    static final String BATCH_SERVICES_FILE = "META-INF/services/dev.settle.sdk.BatchHandler";

    private final transient Path location;

    private HandlerLoadException(Path location, String message, Throwable cause) {
        super(message, cause);
        this.location = Objects.requireNonNull(location, "location");
    }

    /**
     * The JAR or folder of JARs that was refused, absolute.
     *
     * @return the location as it was given to {@link HandlerLoader}, made absolute
     */
    public Path location() {
        return location;
    }

    /**
     * The message as the sender of an upload reads it: the file Settle stored the upload under is an internal name
     * (its data folder, its sha256), and the manifest's {@code jar} is not what the sender can change, so both are
     * replaced by what they mean to that sender.
     *
     * @param stored where the uploaded bytes were stored
     * @return the message for the upload's refusal
     */
    public String forUpload(Path stored) {
        return getMessage()
                .replace("handler JAR " + stored, "the uploaded JAR")
                .replace(stored + " is not a JAR", "the uploaded file is not a JAR")
                .replace(stored.toString(), "the uploaded JAR")
                .replace(
                        "point the manifest's jar at the JAR your build produces",
                        "upload the JAR your build produces (target/<name>.jar after mvn package)");
    }

    static HandlerLoadException missing(Path location) {
        return new HandlerLoadException(
                location,
                "handler JAR " + location + " does not exist; build it, or correct the jar path in the manifest",
                null);
    }

    static HandlerLoadException folderWithoutJars(Path folder) {
        return new HandlerLoadException(
                folder,
                "handler folder " + folder + " contains no .jar files; put the handler's JAR and the JARs of its"
                        + " libraries there",
                null);
    }

    static HandlerLoadException notAFileOrFolder(Path location) {
        return new HandlerLoadException(
                location,
                "handler JAR " + location + " is neither a regular file nor a folder (a named pipe, socket or"
                        + " device?); point the manifest's jar at the JAR your build produces, or at a folder of"
                        + " JARs",
                null);
    }

    static HandlerLoadException jarLimit(Path location, JarLimitException limit) {
        String what = limit.entry().isPresent()
                ? "entry " + limit.entry().get() + " inflates to more than " + mebibytes(limit.limit())
                        + (limit.claimed() >= 0 ? " (its zip header claims " + limit.claimed() + " bytes)" : "")
                        + ", the most Settle reads of one class or resource"
                : "has " + limit.claimed() + " entries, more than the " + limit.limit() + " Settle reads";
        return new HandlerLoadException(
                location,
                "handler JAR " + limit.jar() + ": " + what + "; it looks like a zip bomb, not a build output:"
                        + " rebuild the JAR from its sources",
                limit);
    }

    static HandlerLoadException declaredInSeveralJars(Path location, String className, List<Path> jars) {
        return new HandlerLoadException(
                location,
                location + ": handler " + className + " is declared in " + jars.size() + " JARs: " + fileNames(jars)
                        + "; keep one copy of the handler's JAR in the folder",
                null);
    }

    static HandlerLoadException deadlineExceeded(
            Path location, String className, String doing, java.time.Duration deadline) {
        return new HandlerLoadException(
                location,
                location + ": handler " + className + " did not finish " + doing + " within "
                        + DurationText.format(deadline)
                        + "; it may wait for a lock, the network or input that never comes."
                        + " Keep its static initialiser and constructor quick, and connect to what it needs in"
                        + " open()",
                null);
    }

    static HandlerLoadException interrupted(Path location, String className, String doing) {
        return new HandlerLoadException(
                location,
                location + ": interrupted while waiting for handler " + className + " to finish " + doing
                        + "; Settle is stopping",
                null);
    }

    static HandlerLoadException notAJar(Path location, Path file, Exception cause) {
        return new HandlerLoadException(
                location,
                file + " is not a JAR: it cannot be read as a zip archive; point the manifest's jar at the JAR"
                        + " your build produces",
                cause);
    }

    static HandlerLoadException unreadable(Path location, Path file, Exception cause) {
        return new HandlerLoadException(location, "cannot read handler JAR " + file + ": " + describe(cause), cause);
    }

    static HandlerLoadException badServicesLine(
            Path location, Path jar, String servicesFile, int lineNumber, String line) {
        return new HandlerLoadException(
                location,
                jar + ": line " + lineNumber + " of " + servicesFile + " is not a class name: '"
                        + UntrustedText.escape(line, 200) + "'; write one fully qualified class name a line",
                null);
    }

    static HandlerLoadException noHandlerDeclared(Path location, List<Path> jarsOfFolder) {
        String where = jarsOfFolder.isEmpty() ? location.toString() : location + " (" + fileNames(jarsOfFolder) + ")";
        return new HandlerLoadException(
                location,
                where + " declares no handler in " + SERVICES_FILE + "; add a line with your handler's class name",
                null);
    }

    static HandlerLoadException severalDeclared(Path location, List<String> declared) {
        return new HandlerLoadException(
                location,
                location + " declares several handlers: " + String.join(", ", declared)
                        + "; name one with handler: in the manifest",
                null);
    }

    static HandlerLoadException notDeclared(Path location, String className, List<String> declared) {
        return new HandlerLoadException(
                location,
                location + " does not declare handler " + className + "; it declares " + String.join(", ", declared)
                        + ". Name one of those, or add " + className + " to " + SERVICES_FILE,
                null);
    }

    static HandlerLoadException classMissing(Path location, String className, Throwable cause) {
        return new HandlerLoadException(
                location,
                location + " declares handler " + className + " in " + SERVICES_FILE + ", but has no class " + className
                        + "; correct the services file or rebuild the JAR",
                cause);
    }

    static HandlerLoadException notAHandler(Path location, String className) {
        return new HandlerLoadException(
                location,
                location + " declares handler " + className + ", but " + className + " does not implement "
                        + "dev.settle.sdk.Handler; implement Handler<T>, or remove the line from " + SERVICES_FILE,
                null);
    }

    static HandlerLoadException notConcrete(Path location, String className) {
        return new HandlerLoadException(
                location, location + ": handler " + className + " is abstract; declare a concrete class", null);
    }

    static HandlerLoadException notPublic(Path location, String className) {
        return new HandlerLoadException(
                location,
                location + ": handler " + className + " is not a public class; make it public (and top-level or"
                        + " static)",
                null);
    }

    static HandlerLoadException noPublicConstructor(Path location, String className) {
        return new HandlerLoadException(
                location,
                location + ": handler " + className + " has no public no-argument constructor; add one, Settle"
                        + " creates the handler with it",
                null);
    }

    static HandlerLoadException unresolvedMessageType(Path location, String className, String found) {
        return new HandlerLoadException(
                location,
                location + ": handler " + className + " does not say which message type it takes (found " + found
                        + "); declare it, e.g. implements Handler<String>",
                null);
    }

    static HandlerLoadException functionMissing(Path location, String className) {
        return new HandlerLoadException(
                location,
                location + " has no class " + className + "; correct function in the manifest (a class name such as"
                        + " com.acme.EnrichFunction), or rebuild the JAR",
                null);
    }

    static HandlerLoadException notAFunction(Path location, String className) {
        return new HandlerLoadException(
                location,
                location + ": function " + className + " implements neither"
                        + " org.apache.pulsar.functions.api.Function nor java.util.function.Function; implement one,"
                        + " or name a Settle handler with handler: instead",
                null);
    }

    static HandlerLoadException unresolvedFunctionTypes(Path location, String className, String input, String output) {
        return new HandlerLoadException(
                location,
                location + ": function " + className + " does not say which types it takes and returns (found " + input
                        + " and " + output + "); declare them, e.g. implements Function<String, String>",
                null);
    }

    static HandlerLoadException cannotLoad(Path location, String className, Throwable cause) {
        return new HandlerLoadException(
                location,
                location + ": handler " + className + " cannot be loaded: " + describe(cause)
                        + "; bundle the libraries it needs in its JAR, or load a folder with its JAR and theirs",
                cause);
    }

    static HandlerLoadException staticInitialiserFailed(Path location, String className, Throwable cause) {
        return new HandlerLoadException(
                location,
                location + ": handler " + className + " failed in its static initialiser: " + describe(cause),
                cause);
    }

    static HandlerLoadException constructorFailed(Path location, String className, Throwable cause) {
        return new HandlerLoadException(
                location,
                location + ": handler " + className + " failed in its constructor: " + describe(cause),
                cause);
    }

    /** A Pulsar Function's {@code initialize} threw: the runtime refuses to start. */
    public static HandlerLoadException initializeFailed(
            Path location, String className, String subscription, Throwable cause) {
        return new HandlerLoadException(
                location,
                location + ": function " + className + " failed in initialize for subscription " + subscription + ": "
                        + describe(cause),
                cause);
    }

    static HandlerLoadException openFailed(Path location, String className, String subscription, Throwable cause) {
        return new HandlerLoadException(
                location,
                location + ": handler " + className + " failed to open for subscription " + subscription + ": "
                        + describe(cause),
                cause);
    }

    /**
     * The cause's class and message; {@code toString()} could be overridden by the handler's exception. The message
     * is the handler's text, escaped: it reaches {@code validate}'s output and the log.
     */
    static String describe(Throwable cause) {
        if (cause == null) {
            return "unknown cause";
        }
        String message = cause.getMessage();
        return message == null
                ? cause.getClass().getName()
                : cause.getClass().getName() + ": " + UntrustedText.escape(message);
    }

    private static String mebibytes(long bytes) {
        return bytes % (1024 * 1024) == 0 ? bytes / (1024 * 1024) + " MiB" : bytes + " bytes";
    }

    private static String fileNames(List<Path> jars) {
        return String.join(
                ", ", jars.stream().map(jar -> jar.getFileName().toString()).toList());
    }
}
