package dev.settle.runtime.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * {@code java -jar settle-runtime.jar run|validate|help}: the command line, parsed by picocli, so that it behaves
 * as its peers do: {@code --version}, {@code help} and {@code <command> --help}, {@code --opt=value} and
 * {@code --opt value}, and exit codes that tell a refused manifest (2) from a misunderstood command line (64).
 */
@Command(
        name = "settle",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = "Runs Apache Pulsar handlers from a manifest: loads each handler JAR in a class loader of its"
                + " own and settles every message on Pulsar.",
        synopsisSubcommandLabel = "COMMAND",
        commandListHeading = "%nCommands:%n",
        exitCodeListHeading = "%nExit codes:%n",
        footer = "%nRun 'settle COMMAND --help' for a command's options. The manifest's reference: docs/manifest.md.")
public final class Main implements Callable<Integer> {
    /** Exit code of a manifest (or handler JAR) that is refused ({@link ExitCode#REFUSED}). */
    public static final int INVALID = 2;
    /** Exit code of a runtime stopped by an error it cannot survive ({@link ExitCode#FATAL}). */
    public static final int FATAL = 70;
    /** Exit code of a command line that is not understood ({@link ExitCode#USAGE}). */
    public static final int USAGE = 64;
    /** Exit code of a broker or admin API that cannot be reached ({@link ExitCode#UNREACHABLE}). */
    static final int UNREACHABLE = 1;
    /**
     * The OpenTelemetry API logs, through java.util.logging and at INFO, that it found the SDK but will not configure it,
     * advising a JVM flag: two lines in another format at every command that builds a Pulsar client. Settle configures
     * tracing itself (the manifest's tracing key); warnings still pass. Held: java.util.logging keeps loggers weakly.
     */
    private static final java.util.logging.Logger OPEN_TELEMETRY_NOTICE =
            java.util.logging.Logger.getLogger("io.opentelemetry.api.GlobalOpenTelemetry");

    @Spec
    CommandSpec spec;

    private Main() {}

    public static void main(String[] args) {
        OPEN_TELEMETRY_NOTICE.setLevel(java.util.logging.Level.WARNING);
        System.exit(execute(Arrays.asList(args), System.out, System.err));
    }

    /** Runs one command and returns its exit code; {@code run} returns only once the runtime has stopped. */
    public static int execute(List<String> args, PrintStream out, PrintStream err) {
        return execute(args, out, err, System.getenv());
    }

    /** As {@link #execute(List, PrintStream, PrintStream)}, with {@code ${...}} looked up in {@code environment}. */
    static int execute(List<String> args, PrintStream out, PrintStream err, Map<String, String> environment) {
        CommandLine line = new CommandLine(new Main())
                .addSubcommand(new ValidateCommand(out, err, environment))
                .addSubcommand(new PreflightCommand(out, err, environment))
                .addSubcommand(new RunCommand(err))
                .addSubcommand(new DeployCommand())
                .addSubcommand(new RollbackCommand())
                .addSubcommand(new StatusCommand())
                .addSubcommand(new DevCommand())
                .addSubcommand(new ProduceCommand(System.in))
                .addSubcommand(new ConsumeCommand())
                .addSubcommand(new DlqCommand())
                .addSubcommand(new HeldCommand())
                .addSubcommand(new TraceCommand())
                .addSubcommand(new CommandLine.HelpCommand());
        ExitCodes.apply(line);
        keepUrlsWhole(line);
        // Set after the subcommands are added: picocli hands these on only to subcommands it already has.
        line.setOut(writer(out));
        line.setErr(writer(err));
        line.setParameterExceptionHandler(Main::misunderstood);
        line.setExecutionExceptionHandler((failure, command, parsed) -> {
            // Every expected failure is caught and named by its command; this is a bug of ours, so the trace
            // is what helps, and 70 (EX_SOFTWARE) says "do not retry the same input expecting a change".
            command.getErr().println("settle: internal error: " + failure);
            failure.printStackTrace(command.getErr());
            command.getErr().flush();
            return FATAL;
        });
        return line.execute(args.toArray(String[]::new));
    }

    /** {@code settle} alone: the usage, and 64, as any command line that does not say what to do. */
    @Override
    public Integer call() {
        return usage(spec, "settle: no command given");
    }

    /** A command line that does not say what to do: {@code why}, then {@code command}'s usage, on stderr; 64. */
    static int usage(CommandSpec command, String why) {
        PrintWriter err = command.commandLine().getErr();
        err.println(why);
        command.commandLine().usage(err);
        err.flush();
        return USAGE;
    }

    private static int misunderstood(CommandLine.ParameterException problem, String[] args) {
        CommandLine command = problem.getCommandLine();
        PrintWriter err = command.getErr();
        if (command.getCommandSpec().userObject() instanceof Main
                && problem instanceof UnmatchedArgumentException unmatched
                && !unmatched.getUnmatched().isEmpty()
                && !unmatched.getUnmatched().get(0).startsWith("-")) {
            // A mistyped command: one line that says what to type (picocli's closest match first), not picocli's
            // argument index and the whole usage.
            String typed = unmatched.getUnmatched().get(0);
            List<String> suggestions = unmatched.getSuggestions();
            err.println("settle: unknown command '" + typed + "'"
                    + (suggestions.isEmpty()
                            ? "; the commands are "
                                    + String.join(", ", command.getSubcommands().keySet())
                            : "; did you mean " + suggestions.get(0) + "?")
                    + " (settle --help lists them)");
            err.flush();
            return USAGE;
        }
        err.println("settle: " + problem.getMessage());
        UnmatchedArgumentException.printSuggestions(problem, err);
        command.usage(err);
        err.flush();
        return USAGE;
    }

    /**
     * picocli wraps help text where {@link java.text.BreakIterator} allows, which is after the colon of a URL
     * ("pulsar:" at a line's end, "//localhost:6650" on the next): such a URL moves whole to the next line.
     */
    private static void keepUrlsWhole(CommandLine command) {
        Map<String, CommandLine.IHelpSectionRenderer> sections = new java.util.LinkedHashMap<>();
        command.getHelpSectionMap()
                .forEach((key, renderer) -> sections.put(key, help -> joinUrls(renderer.render(help))));
        command.setHelpSectionMap(sections);
        command.getSubcommands().values().forEach(Main::keepUrlsWhole);
    }

    private static final java.util.regex.Pattern BROKEN_URL =
            java.util.regex.Pattern.compile("(?<=[\\s(])([a-z][a-z+]*): *\\n( *)//");

    static String joinUrls(String text) {
        return BROKEN_URL.matcher(text).replaceAll("\n$2$1://").replaceAll(" +\n", "\n");
    }

    private static PrintWriter writer(PrintStream stream) {
        return new PrintWriter(stream, true);
    }
}
