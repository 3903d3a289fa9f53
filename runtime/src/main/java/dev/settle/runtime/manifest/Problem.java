package dev.settle.runtime.manifest;

/**
 * One reason a manifest is refused, printed as {@code file:line:col: path: message}.
 *
 * @param location where the offending value (or its parent, when missing) was written
 * @param path the setting, such as {@code subscriptions[2].maxAttempts}
 * @param message what is wrong, the value in quotes, and what to do
 */
public record Problem(Location location, String path, String message) {
    @Override
    public String toString() {
        return location + ": " + path + ": " + message;
    }
}
