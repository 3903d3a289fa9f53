package dev.settle.testbroker;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.testcontainers.pulsar.PulsarContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * Gives a test a real Pulsar broker, started once per test JVM and shared by every test class.
 *
 * <p>Declare {@code @ExtendWith(PulsarBroker.class)} and take a {@link PulsarEndpoints} parameter. Which broker:
 *
 * <ul>
 *   <li>default: {@link EmbeddedPulsar}, an in-process standalone from Maven Central artifacts (what CI runs);
 *   <li>{@code -Dsettle.pulsar.serviceUrl=pulsar://...} with {@code -Dsettle.pulsar.adminUrl=http://...}: that
 *       broker (it should have {@code acknowledgmentAtBatchIndexLevelEnabled=true} for the batch tests);
 *   <li>{@code -Dsettle.pulsar=testcontainers}: a Testcontainers {@code PulsarContainer} (needs Docker).
 * </ul>
 *
 * The embedded and the container broker have package management on (a file-system store for the embedded one), so
 * the fleet tests ({@code admin.codeStore: pulsar}) share this broker instead of starting one each; a broker given by
 * URL needs {@code enablePackagesManagement=true} for them. The broker is stopped when the whole test plan ends.
 */
public final class PulsarBroker implements ParameterResolver {
    /** The image the Testcontainers path runs: the same version as the client. */
    public static final String IMAGE = "apachepulsar/pulsar:4.2.4";

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(PulsarBroker.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == PulsarEndpoints.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return endpoints(context);
    }

    /** The shared broker's endpoints, starting it on first use. */
    public static PulsarEndpoints endpoints(ExtensionContext context) {
        // The root store lives as long as the test plan and closes AutoCloseable values at its end.
        return context.getRoot()
                .getStore(NAMESPACE)
                .getOrComputeIfAbsent(SharedBroker.class, key -> SharedBroker.start(), SharedBroker.class)
                .endpoints();
    }

    /** One broker of whichever kind the system properties ask for. */
    static final class SharedBroker implements AutoCloseable {
        private final PulsarEndpoints endpoints;
        private final AutoCloseable resource;

        private SharedBroker(PulsarEndpoints endpoints, AutoCloseable resource) {
            this.endpoints = endpoints;
            this.resource = resource;
        }

        static SharedBroker start() {
            String serviceUrl = System.getProperty("settle.pulsar.serviceUrl");
            if (serviceUrl != null) {
                String adminUrl = System.getProperty("settle.pulsar.adminUrl");
                if (adminUrl == null) {
                    throw new IllegalStateException(
                            "-Dsettle.pulsar.serviceUrl needs -Dsettle.pulsar.adminUrl too (the broker's http URL)");
                }
                log("using the broker at " + serviceUrl + " (admin " + adminUrl + ")");
                return new SharedBroker(new PulsarEndpoints(serviceUrl, adminUrl), () -> {});
            }
            String kind = System.getProperty("settle.pulsar", "embedded");
            try {
                return switch (kind) {
                    case "embedded" -> embedded();
                    case "testcontainers" -> container();
                    default ->
                        throw new IllegalStateException(
                                "-Dsettle.pulsar=" + kind + " is not known: use embedded (default) or testcontainers");
                };
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("the " + kind + " Pulsar broker failed to start", e);
            }
        }

        private static SharedBroker embedded() throws Exception {
            log("starting an embedded Pulsar standalone (in-process, own class loader, package management on)...");
            Map<String, String> packages = PulsarFixture.packageManagement();
            EmbeddedPulsar pulsar = EmbeddedPulsar.start(packages);
            log(String.format(
                    "embedded Pulsar started in %.1f s at %s (admin %s)",
                    pulsar.startMillis() / 1000.0,
                    pulsar.endpoints().serviceUrl(),
                    pulsar.endpoints().adminUrl()));
            return new SharedBroker(pulsar.endpoints(), () -> {
                pulsar.close();
                EmbeddedPulsar.deleteRecursively(Path.of(packages.get("STORAGE_PATH")));
            });
        }

        @SuppressWarnings("resource")
        private static SharedBroker container() {
            long started = System.nanoTime();
            log("starting " + IMAGE + " with Testcontainers...");
            PulsarContainer container = new PulsarContainer(DockerImageName.parse(IMAGE))
                    .withEnv("PULSAR_PREFIX_acknowledgmentAtBatchIndexLevelEnabled", "true")
                    .withEnv("PULSAR_PREFIX_enablePackagesManagement", "true")
                    .withStartupTimeout(Duration.ofMinutes(3));
            container.start();
            log(String.format("PulsarContainer started in %.1f s", (System.nanoTime() - started) / 1e9));
            return new SharedBroker(
                    new PulsarEndpoints(container.getPulsarBrokerUrl(), container.getHttpServiceUrl()),
                    container::stop);
        }

        PulsarEndpoints endpoints() {
            return endpoints;
        }

        @Override
        public void close() throws Exception {
            long started = System.nanoTime();
            resource.close();
            log(String.format("broker stopped in %.1f s", (System.nanoTime() - started) / 1e9));
        }

        private static void log(String message) {
            System.out.println("[settle-test-broker] " + message);
        }
    }
}
