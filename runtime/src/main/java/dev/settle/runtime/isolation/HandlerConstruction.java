package dev.settle.runtime.isolation;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs the handler's own code that loading reaches (its static initialiser, its constructor, the classes they
 * load) on a thread of its own, with a deadline, and says on stderr which handler it was if the JVM is asked to
 * exit meanwhile.
 *
 * <p>Why a thread: a static initialiser that never returns cannot be interrupted, and every later use of the
 * class would wait for it too; waiting with a deadline is the only way to refuse it. The thread is a daemon, so
 * one left stuck does not keep the JVM alive after {@code validate} has printed its refusal.
 *
 * <p>Why a shutdown hook: a handler calling {@code System.exit} in its constructor ends the JVM with the
 * handler's exit code and nothing on stderr. The hook runs while the exiting thread is still inside the handler,
 * so it can tell which class it was and what Settle was doing with it; the hook is removed once loading ends.
 */
final class HandlerConstruction {

    /** What loading was doing: the words of the messages. */
    enum Stage {
        LOADING("loading the class"),
        INITIALISING("running its static initialiser"),
        CONSTRUCTING("constructing it");

        private final String doing;

        Stage(String doing) {
            this.doing = doing;
        }

        String doing() {
            return doing;
        }
    }

    /** The steps, run on the loading thread; they report each stage before entering it. */
    @FunctionalInterface
    interface Steps<T> {
        T run(HandlerConstruction progress) throws HandlerLoadException;
    }

    private final Path location;
    private final String className;
    private volatile Stage stage = Stage.LOADING;
    private volatile boolean done;

    private HandlerConstruction(Path location, String className) {
        this.location = location;
        this.className = className;
    }

    /** Called by the steps as they go. */
    void enter(Stage next) {
        stage = next;
    }

    /**
     * Runs {@code steps} and waits at most {@code deadline} for them.
     *
     * @throws HandlerLoadException what the steps threw, or a refusal naming the stage that did not finish
     */
    static <T> T run(Path location, String className, Duration deadline, Steps<T> steps) throws HandlerLoadException {
        HandlerConstruction construction = new HandlerConstruction(location, className);
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread loading = new Thread(
                () -> {
                    try {
                        result.complete(steps.run(construction));
                    } catch (Throwable e) {
                        result.completeExceptionally(e);
                    } finally {
                        construction.done = true;
                    }
                },
                "settle-load-" + className);
        loading.setDaemon(true);
        PrintStream err = System.err;
        Thread exitReport = new Thread(() -> construction.reportExit(loading, err), "settle-exit-report");
        Runtime.getRuntime().addShutdownHook(exitReport);
        try {
            loading.start();
            return result.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            // Interrupting may free a handler waiting on a lock or a sleep; a busy loop stays, a daemon.
            loading.interrupt();
            throw HandlerLoadException.deadlineExceeded(location, className, construction.stage.doing(), deadline);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            loading.interrupt();
            throw HandlerLoadException.interrupted(location, className, construction.stage.doing());
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof HandlerLoadException refused) {
                throw refused;
            }
            if (cause instanceof RuntimeException unchecked) {
                throw unchecked;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(cause);
        } finally {
            construction.done = true;
            try {
                Runtime.getRuntime().removeShutdownHook(exitReport);
            } catch (IllegalStateException shuttingDown) {
                // The JVM is exiting: the hook has run or is running.
            }
        }
    }

    private void reportExit(Thread loading, PrintStream err) {
        if (done) {
            return;
        }
        boolean calledExit = false;
        for (StackTraceElement frame : loading.getStackTrace()) {
            if (frame.getClassName().equals("java.lang.Runtime")
                    && frame.getMethodName().equals("exit")) {
                calledExit = true;
                break;
            }
        }
        String doing = stage.doing();
        err.println(
                calledExit
                        ? "settle: handler class " + className + " (" + location
                                + ") called System.exit while Settle was "
                                + doing + "; a handler must not end the JVM: throw an exception from its constructor or"
                                + " static initialiser instead, and Settle reports it"
                        : "settle: the JVM was asked to exit during the loading of handler class " + className + " ("
                                + location + "), while Settle was " + doing);
        err.flush();
    }
}
