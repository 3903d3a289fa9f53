package dev.settle.runtime.cli;

import dev.settle.runtime.Settle;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.manifest.Defaults;
import dev.settle.runtime.manifest.Manifest;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.observe.LogFormat;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.apache.pulsar.client.api.PulsarClientException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/**
 * {@code settle run <manifest>}: validates exactly as {@code validate} does, starts every subscription, and runs
 * until SIGTERM or SIGINT, then stops cleanly (docs/design.md, "Stopping") and exits 0.
 */
final class RunCommand {
    private static final Logger log = LoggerFactory.getLogger(RunCommand.class);

    private RunCommand() {}

    static int execute(List<String> args, PrintStream out, PrintStream err) {
        List<String> rest = new ArrayList<>(args);
        String logFormat = "text";
        int flag = rest.indexOf("--log-format");
        if (flag >= 0) {
            if (flag + 1 >= rest.size()) {
                return Main.usage(err, "--log-format needs a value: text or json");
            }
            logFormat = rest.get(flag + 1);
            rest.remove(flag + 1);
            rest.remove(flag);
        }
        if (rest.size() != 1) {
            return Main.usage(err, "run takes one manifest file, got " + rest.size() + " arguments");
        }
        try {
            LogFormat.apply(logFormat);
        } catch (IllegalArgumentException e) {
            return Main.usage(err, e.getMessage());
        }
        Path file = Path.of(rest.get(0));
        Manifest manifest;
        JarHandlerCheck handlers = new JarHandlerCheck();
        try {
            manifest = ManifestCheck.load(file, handlers);
        } catch (ManifestException refused) {
            handlers.close();
            ManifestCheck.report(refused, err);
            err.println("settle: refusing to start; run 'settle validate " + file + "' after fixing the problems above");
            return Main.INVALID;
        } catch (IOException unreadable) {
            handlers.close();
            ManifestCheck.report(file, unreadable, err);
            return Main.INVALID;
        }
        log.info("manifest {} loaded: {} subscriptions", manifest.file(), manifest.subscriptions().size());
        return run(manifest, handlers, err);
    }

    /** Runs the handlers {@code handlers} checked; Settle closes their loader. */
    private static int run(Manifest manifest, JarHandlerCheck handlers, PrintStream err) {
        CountDownLatch stopRequested = new CountDownLatch(1);
        // SIGTERM (Kubernetes) and SIGINT (Ctrl-C) ask for a clean stop; handling them ourselves, rather than in a
        // shutdown hook, lets the drain finish and the process exit 0 instead of 143.
        for (String name : List.of("TERM", "INT")) {
            Signal.handle(new Signal(name), signal -> {
                log.info("SIG{} received: stopping", signal.getName());
                stopRequested.countDown();
            });
        }
        Settle settle;
        try {
            settle = Settle.start(manifest, handlers.loader(), handlers.loaded(), Defaults.DRAIN_GRACE);
        } catch (HandlerLoadException e) {
            err.println("settle: " + e.getMessage());
            return Main.INVALID;
        } catch (PulsarClientException e) {
            err.println("settle: cannot connect to Pulsar at " + manifest.pulsar().serviceUrl() + ": " + e.getMessage());
            return 1;
        } catch (IOException e) {
            err.println("settle: " + e.getMessage());
            return 1;
        }
        log.info("settle running: /metrics, /livez and /readyz on port {}", settle.httpPort());
        try {
            stopRequested.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        settle.close();
        return 0;
    }
}
