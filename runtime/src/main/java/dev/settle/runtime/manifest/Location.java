package dev.settle.runtime.manifest;

import java.nio.file.Path;

/**
 * A place in a manifest file; line and column start at 1.
 *
 * @param file the manifest file
 * @param line the line, from 1
 * @param column the column, from 1
 */
public record Location(Path file, int line, int column) {
    @Override
    public String toString() {
        return file + ":" + line + ":" + column;
    }
}
