package dev.settle.reliability;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Counts the acknowledgements in a growing record file, reading only what was added since the last call. */
final class AckCounter {
    private final Path file;
    private long position;
    private long acks;

    AckCounter(Path file) {
        this.file = file;
    }

    long acks() throws IOException {
        if (!Files.exists(file)) {
            return acks;
        }
        try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
            long length = in.length();
            if (length <= position) {
                return acks;
            }
            byte[] added = new byte[(int) (length - position)];
            in.seek(position);
            in.readFully(added);
            String text = new String(added, StandardCharsets.US_ASCII);
            int complete = text.lastIndexOf('\n') + 1;
            for (String line : text.substring(0, complete).split("\n")) {
                if (line.contains(" ack ")) {
                    acks++;
                }
            }
            position += complete;
        }
        return acks;
    }
}
