package dev.settle.runtime.cli;

import dev.settle.runtime.Settle;
import dev.settle.runtime.isolation.HandlerLoadException;
import dev.settle.runtime.deployment.Deployment;
import dev.settle.runtime.deployment.Preflight;
import dev.settle.runtime.driver.SchemaConflictException;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.observe.LogFormat;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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
        Deployment deployment;
        try {
            deployment = Preflight.check(file, System.getenv());
        } catch (ManifestException refused) {
            Refusals.report(refused, err);
            err.println("settle: refusing to start; run 'settle validate " + file + "' after fixing the problems above");
            return Main.INVALID;
        } catch (IOException unreadable) {
            Refusals.report(file, unreadable, err);
            return Main.INVALID;
        }
        try (deployment) {
            log.info("manifest {} loaded: {} subscriptions", deployment.manifest().file(),
                    deployment.subscriptions().size());
            return run(deployment, err);
        }
    }

    private static int run(Deployment deployment, PrintStream err) {
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        // SIGTERM (Kubernetes) and SIGINT (Ctrl-C) ask for a clean stop; handling them ourselves, rather than in a
        // shutdown hook, lets the drain finish and the process exit 0 instead of 143.
        for (String name : List.of("TERM", "INT")) {
            Signal.handle(new Signal(name), signal -> {
                log.info("SIG{} received: stopping", signal.getName());
                exit.complete(0);
            });
        }
        Settle settle;
        try {
            settle = Settle.start(deployment, deployment.manifest().shutdown().grace());
        } catch (HandlerLoadException e) {
            err.println("settle: " + e.getMessage());
            return Main.INVALID;
        } catch (SchemaConflictException e) {
            // The topic and the handler disagree on the schema: a configuration problem, like an invalid manifest.
            err.println("settle: " + e.getMessage());
            err.println("settle: refusing to start");
            return Main.INVALID;
        } catch (PulsarClientException e) {
            err.println("settle: cannot connect to Pulsar at " + deployment.manifest().pulsar().serviceUrl() + ": "
                    + e.getMessage());
            return 1;
        } catch (IOException e) {
            err.println("settle: " + e.getMessage());
            return 1;
        }
        settle.fatalError().thenAccept(fatal -> {
            err.println("settle: subscription '" + fatal.subscription() + "' hit " + fatal.error()
                    + "; the process cannot be trusted to go on: stopping the subscriptions and exiting "
                    + Main.FATAL + " so that it is restarted");
            exit.complete(Main.FATAL);
        });
        log.info("settle running: /metrics, /livez and /readyz on port {}", settle.httpPort());
        int code = exit.join();
        settle.close();
        return code;
    }
}
