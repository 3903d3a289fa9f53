package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.sdk.Handler;
import dev.settle.sdk.Outcome;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Handlers in real JARs see their own libraries, the runtime's SDK and SLF4J, and nothing else of the runtime. */
class HandlerIsolationTest {

    @TempDir
    static Path dir;

    static Path greeterV1Jar;
    static Path greeterV2Folder;
    static Path probeJar;

    private final HandlerLoader loader = new HandlerLoader();

    @BeforeAll
    static void buildHandlerJars() throws IOException {
        // Two versions of one library whose only method changed its signature: a handler compiled against one
        // fails with NoSuchMethodError against the other.
        String greetingV1 = """
                package com.acme.lib;
                public final class Greeting {
                    public static String greet(String name) { return "Hello, " + name; }
                }
                """;
        String greetingV2 = """
                package com.acme.lib;
                public final class Greeting {
                    public static String greet(String name, boolean loud) {
                        return loud ? "HELLO, " + name.toUpperCase() + "!" : "hello, " + name;
                    }
                }
                """;

        // Handler A bundles v1 inside its own JAR (a fat JAR).
        greeterV1Jar = TestJar.at(dir.resolve("greeter-a.jar"))
                .source("com.acme.lib.Greeting", greetingV1)
                .source("com.acme.a.GreeterA", """
                        package com.acme.a;
                        import dev.settle.sdk.*;
                        public class GreeterA implements Handler<String>, java.util.function.Supplier<Object> {
                            private volatile String last;
                            public Outcome handle(Delivery<String> d) {
                                last = com.acme.lib.Greeting.greet(d.value());
                                return Outcome.ack();
                            }
                            public Object get() { return last; }
                        }
                        """)
                .services("com.acme.a.GreeterA")
                .build();

        // Handler B is a folder: its JAR beside the v2 library's JAR.
        greeterV2Folder = Files.createDirectory(dir.resolve("greeter-b"));
        Path libraryV2 = TestJar.at(greeterV2Folder.resolve("greeting-2.0.jar"))
                .source("com.acme.lib.Greeting", greetingV2)
                .build();
        TestJar.at(greeterV2Folder.resolve("greeter-b.jar"))
                .compiledAgainst(libraryV2)
                .source("com.acme.b.GreeterB", """
                        package com.acme.b;
                        import dev.settle.sdk.*;
                        public class GreeterB implements Handler<String>, java.util.function.Supplier<Object> {
                            private volatile String last;
                            public Outcome handle(Delivery<String> d) {
                                last = com.acme.lib.Greeting.greet(d.value(), true);
                                return Outcome.retry();
                            }
                            public Object get() { return last; }
                        }
                        """)
                .services("com.acme.b.GreeterB")
                .build();

        probeJar = TestJar.at(dir.resolve("probe.jar"))
                .source("com.acme.probe.Probe", """
                        package com.acme.probe;
                        import dev.settle.sdk.*;
                        /** Answers, from inside handler code, what a class name resolves to. */
                        public class Probe implements Handler<String>, java.util.function.Function<String, Object> {
                            private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Probe.class);
                            public Outcome handle(Delivery<String> d) {
                                LOG.info("probing {}", d.value());
                                return Outcome.ack();
                            }
                            public Object apply(String className) {
                                try {
                                    return Class.forName(className);
                                } catch (ClassNotFoundException e) {
                                    return e;
                                }
                            }
                        }
                        """)
                // A bundled copy of a shared package's class must not be used.
                .source("org.slf4j.Bundled", "package org.slf4j; public class Bundled {}")
                .resource("settle-isolation-probe.properties", "side=handler\n")
                .resource("logback.xml", "<configuration><!-- the handler's --></configuration>\n")
                .services("com.acme.probe.Probe")
                .build();
    }

    @AfterEach
    void closeLoader() {
        loader.close();
    }

    @Test
    void twoHandlersBundlingIncompatibleVersionsOfALibraryRunSideBySide() throws Exception {
        LoadedHandler a = loader.load(greeterV1Jar, Optional.empty());
        LoadedHandler b = loader.load(greeterV2Folder, Optional.empty());

        Outcome fromA = a.callInHandlerContext(() -> a.handler().handle(FakeDelivery.of("ada")));
        Outcome fromB = b.callInHandlerContext(() -> b.handler().handle(FakeDelivery.of("ada")));

        assertThat(fromA).isSameAs(Outcome.ack());
        assertThat(fromB).isSameAs(Outcome.retry());
        assertThat(((Supplier<?>) a.handler()).get()).isEqualTo("Hello, ada");
        assertThat(((Supplier<?>) b.handler()).get()).isEqualTo("HELLO, ADA!");
        Class<?> greetingOfA = Class.forName("com.acme.lib.Greeting", false, a.classLoader());
        Class<?> greetingOfB = Class.forName("com.acme.lib.Greeting", false, b.classLoader());
        assertThat(greetingOfA).isNotSameAs(greetingOfB);
        assertThat(greetingOfA.getClassLoader()).isSameAs(a.classLoader());
        assertThat(greetingOfB.getClassLoader()).isSameAs(b.classLoader());
    }

    @Test
    void theLibraryOfOneHandlerIsInvisibleToTheRuntimeAndToTheOtherHandler() throws Exception {
        LoadedHandler a = loader.load(greeterV1Jar, Optional.empty());
        LoadedHandler probe = loader.load(probeJar, Optional.empty());

        assertThatThrownBy(() ->
                        Class.forName("com.acme.lib.Greeting", false, getClass().getClassLoader()))
                .isInstanceOf(ClassNotFoundException.class);
        assertThatThrownBy(() -> Class.forName("com.acme.a.GreeterA", false, probe.classLoader()))
                .isInstanceOf(ClassNotFoundException.class);
        assertThat(a.handler().getClass().getClassLoader()).isNotSameAs(probe.classLoader());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "org.apache.pulsar.functions.api.Function",
                "org.apache.pulsar.functions.api.Context",
                "org.apache.pulsar.client.api.Schema",
                "org.apache.pulsar.client.api.Message",
            })
    void theFunctionsAndClientApiAreTheRuntimesVeryClasses(String apiClass) throws Exception {
        LoadedHandler probe = loader.load(probeJar, Optional.empty());

        assertThat(Class.forName(apiClass, false, probe.classLoader()))
                .isSameAs(Class.forName(apiClass, false, getClass().getClassLoader()));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "org.apache.pulsar.client.impl.PulsarClientImpl",
                "org.apache.pulsar.client.impl.ConsumerImpl",
                "org.yaml.snakeyaml.Yaml",
                "io.prometheus.metrics.core.metrics.Counter",
                "ch.qos.logback.classic.Logger",
                "dev.settle.runtime.isolation.HandlerLoader",
            })
    void aHandlerCannotLoadTheRuntimesOwnClasses(String runtimeClass) throws Exception {
        // The client's API is shared for Pulsar Functions (below); its implementation is not.
        // The runtime has it: the test would prove nothing otherwise.
        assertThat(Class.forName(runtimeClass, false, getClass().getClassLoader()))
                .isNotNull();
        LoadedHandler probe = loader.load(probeJar, Optional.empty());

        assertThatThrownBy(() -> Class.forName(runtimeClass, false, probe.classLoader()))
                .isInstanceOf(ClassNotFoundException.class);
        assertThat(probeFromInside(probe, runtimeClass)).isInstanceOf(ClassNotFoundException.class);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "dev.settle.sdk.Outcome",
                "dev.settle.sdk.Handler",
                "dev.settle.sdk.Delivery",
                "org.slf4j.Logger",
                "org.slf4j.LoggerFactory"
            })
    void aHandlerSeesTheSdkAndSlf4jAsTheVerySameClassesAsTheRuntime(String sharedClass) throws Exception {
        Class<?> shared = Class.forName(sharedClass, false, getClass().getClassLoader());
        LoadedHandler probe = loader.load(probeJar, Optional.empty());

        assertThat(Class.forName(shared.getName(), false, probe.classLoader())).isSameAs(shared);
        assertThat(probeFromInside(probe, shared.getName())).isSameAs(shared);
    }

    @Test
    void aHandlerLogsThroughTheRuntimesSlf4j() throws Exception {
        LoadedHandler probe = loader.load(probeJar, Optional.empty());

        assertThat(probe.callInHandlerContext(() -> probe.handler().handle(FakeDelivery.of("logging"))))
                .isSameAs(Outcome.ack());
    }

    @Test
    void aHandlerSeesTheJdkThroughThePlatformLoader() throws Exception {
        LoadedHandler probe = loader.load(probeJar, Optional.empty());

        assertThat(probe.classLoader().getParent()).isSameAs(ClassLoader.getPlatformClassLoader());
        assertThat(Class.forName("java.lang.String", false, probe.classLoader()))
                .isSameAs(String.class);
        assertThat(probeFromInside(probe, "java.sql.Timestamp")).isSameAs(java.sql.Timestamp.class);
    }

    @Test
    void aBundledCopyOfASharedPackageIsNeverLoaded() throws Exception {
        LoadedHandler probe = loader.load(probeJar, Optional.empty());

        assertThatThrownBy(() -> Class.forName("org.slf4j.Bundled", false, probe.classLoader()))
                .isInstanceOf(ClassNotFoundException.class);
    }

    @Test
    void resourcesComeFromTheHandlersJarAndNeverFromTheRuntimesClassPath() throws Exception {
        assertThat(side(getClass().getClassLoader().getResource("settle-isolation-probe.properties")))
                .isEqualTo("runtime");
        LoadedHandler probe = loader.load(probeJar, Optional.empty());
        ClassLoader handlerLoader = probe.classLoader();

        assertThat(side(handlerLoader.getResource("settle-isolation-probe.properties")))
                .isEqualTo("handler");
        assertThat(Collections.list(handlerLoader.getResources("settle-isolation-probe.properties")))
                .singleElement()
                .satisfies(url -> assertThat(side(url)).isEqualTo("handler"));
        try (InputStream in = handlerLoader.getResourceAsStream("settle-isolation-probe.properties")) {
            assertThat(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8))
                    .contains("side=handler");
        }
        assertThat(handlerLoader.getResource("logback.xml").toString())
                .startsWith("jar:")
                .contains("probe.jar");
        assertThat(handlerLoader.getResource("logback-test.xml")).isNull();
    }

    @Test
    void resourcesOfTheSharedPackagesComeFromTheRuntime() throws Exception {
        LoadedHandler probe = loader.load(probeJar, Optional.empty());
        ClassLoader runtime = getClass().getClassLoader();

        assertThat(probe.classLoader().getResource("dev/settle/sdk/Outcome.class"))
                .isEqualTo(runtime.getResource("dev/settle/sdk/Outcome.class"));
        assertThat(Collections.list(probe.classLoader().getResources("org/slf4j/Logger.class")))
                .isEqualTo(Collections.list(runtime.getResources("org/slf4j/Logger.class")));
        assertThat(probe.classLoader().getResource("org/slf4j/Bundled.class")).isNull();
    }

    @Test
    @SuppressWarnings("rawtypes") // ServiceLoader<Handler>: a class literal cannot carry a type argument
    void serviceLoaderOverTheHandlersLoaderFindsOnlyTheHandlersOfItsJar() throws Exception {
        LoadedHandler probe = loader.load(probeJar, Optional.empty());

        List<String> found = ServiceLoader.load(Handler.class, probe.classLoader()).stream()
                .map(provider -> provider.type().getName())
                .toList();

        assertThat(found).containsExactly("com.acme.probe.Probe");
        assertThat(loader.declaredHandlers(probeJar)).isEqualTo(found);
    }

    private static Object probeFromInside(LoadedHandler probe, String className) throws Exception {
        @SuppressWarnings("unchecked")
        Function<String, Object> function = (Function<String, Object>) probe.handler();
        return probe.callInHandlerContext(() -> function.apply(className));
    }

    private static String side(URL url) throws IOException {
        Properties properties = new Properties();
        try (InputStream in = url.openStream()) {
            properties.load(in);
        }
        return properties.getProperty("side");
    }
}
