package dev.settle.reliability;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.apache.pulsar.functions.api.Context;
import org.apache.pulsar.functions.api.Function;

/**
 * The reliability suite's Pulsar Function: returns {@code tagged <sequence>} for the input {@code <sequence>}, the
 * runtime sending it to the subscription's {@code output}. With the user config {@code record} set, each call is first
 * written to that file as the recording handler writes its calls, {@code <sequence> 1 returned <epoch millis>}, one
 * unbuffered {@code write} per line, so that a doubled output can be told apart: two calls of one input (it came back)
 * or one call whose output was stored twice.
 */
public final class Tagger implements Function<String, String> {
    /** Opened on the first call (a function has no open); null when no {@code record} is set. */
    private FileOutputStream record;

    private boolean opened;

    @Override
    public String process(String input, Context context) throws IOException {
        FileOutputStream file = record(context);
        if (file != null) {
            byte[] line =
                    (input + " 1 returned " + System.currentTimeMillis() + "\n").getBytes(StandardCharsets.US_ASCII);
            synchronized (this) {
                file.write(line);
            }
        }
        return "tagged " + input;
    }

    private synchronized FileOutputStream record(Context context) {
        if (!opened) {
            opened = true;
            Object file = context.getUserConfigValue("record").orElse(null);
            if (file != null) {
                try {
                    record = new FileOutputStream(file.toString(), true);
                } catch (IOException e) {
                    throw new UncheckedIOException("config.record: cannot open '" + file + "' for append", e);
                }
            }
        }
        return record;
    }
}
