package dev.settle.runtime.function;

/**
 * What a function's {@code context.fatal(t)} becomes once its call is over: an error the driver treats as it treats
 * running out of memory (the runtime stops every subscription and exits so that it is restarted, the message stays
 * unacknowledged and comes back), as Pulsar Functions stop the instance for the function worker to restart it.
 */
final class FunctionFatalError extends VirtualMachineError {
    private static final long serialVersionUID = 1L;

    FunctionFatalError(String function, Throwable cause) {
        super("function " + function + " called context.fatal(" + cause + ")", cause);
    }
}
