package dev.settle.runtime.cli;

/**
 * Every exit code the command line returns, with what it means whatever the command ({@link ExitCodes} says what each
 * command means by it). The codes follow sysexits.h where one fits: 64 a command line not understood, 70 an error of
 * the software itself.
 */
enum ExitCode {
    OK(0, "done: valid, sent, received, shown, swapped; run and dev stopped cleanly by SIGTERM or SIGINT"),
    UNREACHABLE(
            1,
            "something could not be reached or opened: a broker (produce, consume, dlq), the admin API (deploy,"
                    + " rollback, status), run's HTTP port, dev's ports; run waits for a broker it cannot reach"
                    + " instead"),
    REFUSED(2, "refused: a manifest, a handler JAR, a file or an upload; every problem is on stderr"),
    USAGE(64, "the command line is not understood (an unknown command or option, a missing argument)"),
    FATAL(70, "run was stopped by an error it cannot survive (such as a handler's OutOfMemoryError); restart it");

    final int code;
    final String meaning;

    ExitCode(int code, String meaning) {
        this.code = code;
        this.meaning = meaning;
    }
}
