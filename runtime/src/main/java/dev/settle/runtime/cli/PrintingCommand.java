package dev.settle.runtime.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A command that prints to its command line's writers (the process's, or a test's): picocli hands them over through
 * the command's spec, and {@link #run} does the command's work.
 */
abstract class PrintingCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Override
    public final Integer call() throws Exception {
        return run(spec.commandLine().getOut(), spec.commandLine().getErr());
    }

    /** The command's work, printing to {@code out} and {@code err}; its exit code. */
    abstract int run(PrintWriter out, PrintWriter err) throws Exception;
}
