package dev.settle.runtime.cli;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import picocli.CommandLine;

/**
 * The one table of exit codes: what each command means by each code it returns. {@code --help} shows it (set here on
 * each command, not written in its annotation) and docs/cli.md holds it as {@link #markdown()} writes it;
 * ExitCodesIT checks the document against it and runs one failure of every row.
 */
final class ExitCodes {
    record Row(ExitCode code, String meaning) {}

    static final Map<String, List<Row>> BY_COMMAND = table();

    private ExitCodes() {}

    private static Map<String, List<Row>> table() {
        Map<String, List<Row>> table = new LinkedHashMap<>();
        table.put(
                "validate",
                List.of(
                        new Row(ExitCode.OK, "the manifest is valid; what Pulsar will get is printed"),
                        new Row(ExitCode.UNREACHABLE, "with --broker: the broker cannot be reached"),
                        new Row(
                                ExitCode.REFUSED,
                                "the manifest, a handler JAR or the --env-file is refused; with --broker, a check"
                                        + " failed for a guarantee the manifest asks for"),
                        new Row(ExitCode.USAGE, "the command line is not understood")));
        table.put(
                "preflight",
                List.of(
                        new Row(ExitCode.OK, "no check failed for a guarantee the manifest asks for"),
                        new Row(ExitCode.UNREACHABLE, "the broker cannot be reached"),
                        new Row(
                                ExitCode.REFUSED,
                                "a check failed for a guarantee the manifest asks for, or the manifest is refused"),
                        new Row(ExitCode.USAGE, "the command line is not understood")));
        table.put(
                "run",
                List.of(
                        new Row(ExitCode.OK, "stopped cleanly on SIGTERM or SIGINT"),
                        new Row(
                                ExitCode.UNREACHABLE,
                                "its HTTP port (http.port) cannot be opened; a broker that cannot be reached is"
                                        + " waited for, not an exit"),
                        new Row(ExitCode.REFUSED, "the manifest or a handler JAR is refused"),
                        new Row(ExitCode.USAGE, "the command line is not understood"),
                        new Row(
                                ExitCode.FATAL,
                                "stopped by an error it cannot survive (such as a handler's OutOfMemoryError);"
                                        + " restart it")));
        table.put(
                "deploy",
                List.of(
                        new Row(
                                ExitCode.OK,
                                "swapped in; with `--canary`, the ramp started; with `--promote`, `--abort` or"
                                        + " `--step`, done ([canary ramps](live-code.md#canary-ramps))"),
                        new Row(ExitCode.UNREACHABLE, "the admin API cannot be reached or refused the token"),
                        new Row(
                                ExitCode.REFUSED,
                                "the JAR or the token file is refused, or a canary ramp runs (409: promote or abort"
                                        + " it first), or none runs to promote or abort; the running code is"
                                        + " untouched"),
                        new Row(ExitCode.USAGE, "the command line is not understood, or --token-file is missing")));
        table.put(
                "rollback",
                List.of(
                        new Row(ExitCode.OK, "swapped back"),
                        new Row(ExitCode.UNREACHABLE, "the admin API cannot be reached or refused the token"),
                        new Row(
                                ExitCode.REFUSED,
                                "no older generation is kept, or its code is gone; the running code is untouched"),
                        new Row(ExitCode.USAGE, "the command line is not understood, or --token-file is missing")));
        table.put(
                "status",
                List.of(
                        new Row(ExitCode.OK, "shown"),
                        new Row(ExitCode.UNREACHABLE, "the admin API cannot be reached or refused the token"),
                        new Row(ExitCode.REFUSED, "no such subscription, or the token file cannot be read"),
                        new Row(ExitCode.USAGE, "the command line is not understood, or --token-file is missing")));
        table.put(
                "dev",
                List.of(
                        new Row(ExitCode.OK, "stopped by Ctrl-C or SIGTERM"),
                        new Row(
                                ExitCode.UNREACHABLE,
                                "the broker could not start: a port in use, or no embedded broker (not a clone)"),
                        new Row(ExitCode.USAGE, "the command line is not understood")));
        table.put(
                "produce",
                List.of(
                        new Row(ExitCode.OK, "every message was stored by the broker"),
                        new Row(
                                ExitCode.UNREACHABLE,
                                "the broker cannot be reached, or refused a message (its words on stderr)"),
                        new Row(ExitCode.REFUSED, "the --manifest or the --file is refused"),
                        new Row(ExitCode.USAGE, "the command line is not understood")));
        table.put(
                "consume",
                List.of(
                        new Row(ExitCode.OK, "--count messages received"),
                        new Row(
                                ExitCode.UNREACHABLE,
                                "the broker cannot be reached or refused the subscription, or --timeout passed"),
                        new Row(ExitCode.REFUSED, "the --manifest is refused"),
                        new Row(ExitCode.USAGE, "the command line is not understood")));
        return table;
    }

    /** Sets every command's exit code list in its {@code --help}, and the top level's, from the table. */
    static void apply(CommandLine settle) {
        settle.getCommandSpec()
                .usageMessage()
                .exitCodeList(list(List.of(ExitCode.values()).stream()
                        .map(code -> new Row(code, code.meaning))
                        .toList()));
        BY_COMMAND.forEach((name, rows) -> settle.getSubcommands()
                .get(name)
                .getCommandSpec()
                .usageMessage()
                .exitCodeList(list(rows)));
    }

    private static Map<String, String> list(List<Row> rows) {
        Map<String, String> list = new LinkedHashMap<>();
        rows.forEach(row -> list.put(Integer.toString(row.code().code), row.meaning()));
        return list;
    }

    /** The table as docs/cli.md holds it: one row per command and code. */
    static String markdown() {
        StringBuilder text = new StringBuilder("| command | exit | means |\n|---|---|---|\n");
        for (ExitCode code : ExitCode.values()) {
            text.append("| any | ")
                    .append(code.code)
                    .append(" | ")
                    .append(code.meaning)
                    .append(" |\n");
        }
        BY_COMMAND.forEach((name, rows) -> text.append(rows.stream()
                .map(row -> "| `settle " + name + "` | " + row.code().code + " | " + row.meaning() + " |\n")
                .collect(Collectors.joining())));
        return text.toString();
    }
}
