package dev.settle.reliability;

import java.util.List;

/** What a runtime's log says, read line by line. */
final class LogLines {
    private LogLines() {}

    /**
     * Stack-frame lines ({@code \tat ...}) that do not belong to a handler failure: the recording handler throws on
     * purpose, and the runtime logs those failures with their stack, rate-limited, by design.
     */
    static long stackFramesBesideHandlerFailures(List<String> output) {
        long frames = 0;
        boolean inHandlerFailure = false;
        for (String line : output) {
            if (line.startsWith("\tat ") || line.startsWith("\t... ") || line.startsWith("Caused by: ")) {
                if (!inHandlerFailure && line.startsWith("\tat ")) {
                    frames++;
                }
            } else if (Character.isDigit(line.isEmpty() ? ' ' : line.charAt(0))) {
                // A log line (they start with the timestamp): a stack that follows belongs to it.
                inHandlerFailure = line.contains("dev.settle.runtime.handler");
            }
        }
        return frames;
    }
}
