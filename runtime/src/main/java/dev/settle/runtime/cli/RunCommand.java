package dev.settle.runtime.cli;

import dev.settle.runtime.Settle;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.driver.SubscribeRefusedException;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.manifest.Location;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.Problem;
import dev.settle.runtime.observe.LogFormat;
import dev.settle.runtime.trace.TracingRefusedException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pulsar.client.api.PulsarClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * {@code settle run <manifest>}: validates exactly as {@code validate} does, starts every subscription, and runs
 * until SIGTERM or SIGINT, then stops cleanly (docs/design.md, "Stopping") and exits 0.
 */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        versionProvider = Versions.class,
        description = {
            "Run the manifest's handlers on Pulsar until SIGTERM or SIGINT.",
            "Checks the manifest and the handlers exactly as 'validate' does and refuses to start on a problem;"
                    + " on SIGTERM or SIGINT stops receiving, gives in-flight calls shutdown.grace, and exits 0."
        },
        exitCodeListHeading = "%nExit codes:%n")
final class RunCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(RunCommand.class);

    @Parameters(paramLabel = "<manifest.yaml>", description = "the manifest to run")
    Path manifest;

    @Option(
            names = "--log-format",
            paramLabel = "text|json",
            defaultValue = "text",
            description = "text (default) or json: one JSON object a line, for a log collector")
    String logFormat;

    @Spec
    CommandSpec spec;

    private final PrintStream err;

    RunCommand(PrintStream err) {
        this.err = err;
    }

    @Override
    public Integer call() {
        try {
            LogFormat.apply(logFormat);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        Path file = manifest;
        // Before it is read: a change made while the runtime starts is then reloaded once it runs.
        byte[] loaded = ManifestWatcher.digest(file);
        Deployment deployment;
        try {
            deployment = Preflight.check(file, System.getenv());
        } catch (ManifestException refused) {
            Refusals.report(refused, err);
            err.println(
                    "settle: refusing to start; run 'settle validate " + file + "' after fixing the problems above");
            return Main.INVALID;
        } catch (IOException unreadable) {
            Refusals.report(file, unreadable, err);
            return Main.INVALID;
        }
        try (deployment) {
            Optional<String> httpPort = ServiceUrlProbe.httpInsteadOfPulsar(
                    deployment.manifest().pulsar().serviceUrl());
            if (httpPort.isPresent()) {
                // Waiting cannot help: the client would retry for ever with "Connection already closed".
                err.println(new Problem(
                        deployment.manifest().locate("pulsar.serviceUrl"), "pulsar.serviceUrl", httpPort.get()));
                err.println("settle: refusing to start; fix pulsar.serviceUrl in " + file);
                return Main.INVALID;
            }
            log.info(
                    "manifest {} loaded: {} subscriptions",
                    deployment.manifest().file(),
                    deployment.subscriptions().size());
            return run(file, loaded, deployment, err);
        }
    }

    private static int run(Path file, byte[] loaded, Deployment deployment, PrintStream err) {
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        // SIGTERM (Kubernetes) and SIGINT (Ctrl-C) ask for a clean stop; handling them ourselves, rather than in a
        // shutdown hook, lets the drain finish and the process exit 0 instead of 143.
        for (String name : List.of("TERM", "INT")) {
            Signal.handle(new Signal(name), signal -> {
                log.info("SIG{} received: stopping", signal.getName());
                exit.complete(0);
            });
        }
        // SIGHUP's default ends the JVM: taken over before the start, and a reload once running (below).
        java.util.concurrent.atomic.AtomicReference<Runnable> onHangup =
                new java.util.concurrent.atomic.AtomicReference<>(() -> log.info(
                        "SIGHUP received while starting: the manifest is reloaded when it changes, once started"));
        if (Signal.handle(new Signal("HUP"), signal -> onHangup.get().run()) == SignalHandler.SIG_IGN) {
            // A process started with SIGHUP ignored (nohup does that) keeps it ignored: the JVM installs no handler.
            log.warn("SIGHUP is ignored in this process (it was started with SIGHUP ignored, as nohup does), so a"
                    + " SIGHUP does not reload the manifest; a change of its content still does. To reload on SIGHUP,"
                    + " start settle without nohup (or through env --default-signal=HUP)");
        }
        // Started on a thread of its own, so that a stop asked for while a handler's open() hangs still ends the
        // process at once: nothing has been received yet, so nothing is lost.
        CompletableFuture<Settle> starting = new CompletableFuture<>();
        Thread starter = new Thread(
                () -> {
                    try {
                        starting.complete(Settle.start(
                                deployment, deployment.manifest().shutdown().grace()));
                    } catch (Throwable e) {
                        starting.completeExceptionally(e);
                    }
                },
                "settle-start");
        starter.setDaemon(true);
        starter.start();
        CompletableFuture.anyOf(exit, starting).exceptionally(e -> null).join();
        if (!starting.isDone()) {
            log.info("stopped during start-up, before any message was received");
            return exit.join();
        }
        Settle settle;
        try {
            settle = starting.join();
        } catch (CompletionException failed) {
            return startFailed(failed.getCause(), deployment, err);
        }
        settle.fatalError().thenAccept(fatal -> {
            if (fatal.error() instanceof SubscribeRefusedException refused) {
                // A topic refuses the handler's schema, or the client a setting: configuration, like a manifest.
                err.println("settle: " + refused.getMessage());
                err.println("settle: refusing to start");
                exit.complete(Main.INVALID);
                return;
            }
            err.println("settle: subscription '" + fatal.subscription() + "' hit " + fatal.error()
                    + "; the process cannot be trusted to go on: stopping the subscriptions and exiting "
                    + Main.FATAL + " so that it is restarted");
            exit.complete(Main.FATAL);
        });
        // The manifest is reloaded when its content changes and on SIGHUP (docs/live-code.md, "Manifest reload"); one
        // reload at a time, on a thread of its own, so that neither the watcher nor the signal waits for it.
        java.util.concurrent.ExecutorService reloading =
                java.util.concurrent.Executors.newSingleThreadExecutor(runnable -> {
                    Thread thread = new Thread(runnable, "settle-reload");
                    thread.setDaemon(true);
                    return thread;
                });
        Runnable reload = () -> reloading.execute(() -> settle.reload(file, System.getenv()));
        onHangup.set(() -> {
            log.info("SIGHUP received: reloading manifest {}", file);
            reload.run();
        });
        ManifestWatcher watcher = null;
        try {
            watcher = ManifestWatcher.start(file, loaded, reload);
        } catch (IOException e) {
            log.warn("cannot watch manifest {} ({}); SIGHUP still reloads it", file, e.toString());
        }
        log.info("settle running: /metrics, /livez and /readyz on port {}", settle.httpPort());
        BrokerWatch broker =
                BrokerWatch.start(deployment.manifest().pulsar().serviceUrl(), settle.metrics()::disconnected);
        int code = exit.join();
        broker.close();
        if (watcher != null) {
            watcher.close();
        }
        reloading.shutdown();
        settle.close();
        return code;
    }

    /**
     * How to give this run another HTTP port: the environment variable the manifest's {@code http.port} reads
     * ({@code ${SETTLE_HTTP_PORT:-8090}} in a generated project), or the key itself.
     */
    static String otherPort(Manifest manifest) {
        Location at = manifest.locate("http.port");
        try {
            List<String> lines = Files.readAllLines(at.file());
            String line = at.line() >= 1 && at.line() <= lines.size() ? lines.get(at.line() - 1) : "";
            Matcher variable = PORT_VARIABLE.matcher(line);
            if (line.trim().startsWith("port:") && variable.find()) {
                String other =
                        variable.group(2) == null ? "8091" : Integer.toString(Integer.parseInt(variable.group(2)) + 1);
                String name = at.file().getFileName().toString();
                return "is another settle running on it? Stop it, or give this one another port: " + variable.group(1)
                        + "=" + other + " settle run " + name + " (http.port in " + name + " reads "
                        + variable.group(1) + ")";
            }
        } catch (IOException | NumberFormatException unreadable) {
            // The manifest was read a moment ago; without its line, name the key.
        }
        return "is another settle running on it? Stop it, or set http.port in " + at.file() + " to a free port";
    }

    /** {@code ${NAME}} or {@code ${NAME:-default}}, the manifest's substitution. */
    private static final Pattern PORT_VARIABLE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::-(\\d+))?");

    private static int startFailed(Throwable failure, Deployment deployment, PrintStream err) {
        if (failure instanceof HandlerLoadException) {
            err.println("settle: " + failure.getMessage());
            return Main.INVALID;
        }
        if (failure instanceof TracingRefusedException) {
            err.println("settle: " + deployment.manifest().locate("tracing") + ": " + failure.getMessage());
            err.println("settle: refusing to start");
            return Main.INVALID;
        }
        if (failure instanceof PulsarClientException) {
            err.println("settle: cannot create the Pulsar client for "
                    + deployment.manifest().pulsar().serviceUrl() + ": " + failure.getMessage());
            return Main.UNREACHABLE;
        }
        if (failure instanceof IOException) {
            // A port that cannot be bound. The HTTP port's is most often a second settle run of the same project,
            // whose generated manifest reads the port from the environment: say which variable.
            boolean httpPort = String.valueOf(failure.getMessage()).contains("http.port");
            err.println("settle: " + failure.getMessage() + (httpPort ? "; " + otherPort(deployment.manifest()) : ""));
            return Main.UNREACHABLE;
        }
        throw new IllegalStateException("settle failed to start", failure);
    }
}
