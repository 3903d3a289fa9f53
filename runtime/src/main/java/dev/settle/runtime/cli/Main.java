package dev.settle.runtime.cli;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;

/** {@code java -jar settle-runtime.jar run|validate <manifest>}. */
public final class Main {
    /** Exit code of a manifest (or handler JAR) that is refused. */
    public static final int INVALID = 2;
    /** Exit code of a runtime stopped by an error it cannot survive, such as a handler running out of memory. */
    public static final int FATAL = 70;
    /** Exit code of a command line that is not understood. */
    public static final int USAGE = 64;

    private Main() {}

    public static void main(String[] args) {
        System.exit(execute(Arrays.asList(args), System.out, System.err));
    }

    /** Runs one command and returns its exit code; {@code run} returns only once the runtime has stopped. */
    public static int execute(List<String> args, PrintStream out, PrintStream err) {
        if (args.isEmpty()) {
            return usage(err, "no command given");
        }
        List<String> rest = args.subList(1, args.size());
        return switch (args.get(0)) {
            case "validate" -> ValidateCommand.execute(rest, out, err);
            case "run" -> RunCommand.execute(rest, out, err);
            case "-h", "--help", "help" -> {
                out.println(USAGE_TEXT);
                yield 0;
            }
            default -> usage(err, "unknown command '" + args.get(0) + "'");
        };
    }

    static int usage(PrintStream err, String problem) {
        err.println("settle: " + problem);
        err.println(USAGE_TEXT);
        return USAGE;
    }

    static final String USAGE_TEXT = """
            usage: settle run <manifest.yaml> [--log-format text|json]
                   settle validate <manifest.yaml>
              run       validate the manifest, load the handlers, and settle messages until SIGTERM
              validate  check the manifest and its handler JARs; print the effective consumer settings
                        (exit 0), or every problem on stderr (exit 2)""";
}
