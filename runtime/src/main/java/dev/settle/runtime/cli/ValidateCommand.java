package dev.settle.runtime.cli;

import java.io.PrintStream;
import java.util.List;

/** {@code settle validate <manifest>}. */
final class ValidateCommand {
    private ValidateCommand() {}

    static int execute(List<String> args, PrintStream out, PrintStream err) {
        return Main.usage(err, "validate is not built yet");
    }
}
