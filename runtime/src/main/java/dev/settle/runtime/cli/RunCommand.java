package dev.settle.runtime.cli;

import java.io.PrintStream;
import java.util.List;

/** {@code settle run <manifest>}. */
final class RunCommand {
    private RunCommand() {}

    static int execute(List<String> args, PrintStream out, PrintStream err) {
        return Main.usage(err, "run is not built yet");
    }
}
