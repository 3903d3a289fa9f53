package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Discovery, the lifecycle around the handler, and closing: with real JARs. */
class HandlerLoaderTest {

    @TempDir
    static Path dir;

    static Path singleJar;
    static Path twoJar;
    static Path lifecycleJar;

    private final HandlerLoader loader = new HandlerLoader();

    @BeforeAll
    static void buildHandlerJars() throws IOException {
        singleJar = TestJar.at(dir.resolve("single.jar"))
                .source("com.acme.single.Only", """
                        package com.acme.single;
                        import dev.settle.sdk.*;
                        public class Only implements Handler<String> {
                            public Outcome handle(Delivery<String> d) { return Outcome.ack(); }
                        }
                        """)
                .source("com.acme.single.Later", "package com.acme.single; public class Later {}")
                .services("# the one handler of this JAR", "com.acme.single.Only  # trailing comment", "")
                .implementationVersion("1.4.2")
                .build();

        twoJar = TestJar.at(dir.resolve("two.jar"))
                .source("com.acme.two.First", """
                        package com.acme.two;
                        import dev.settle.sdk.*;
                        public class First implements Handler<String> {
                            public Outcome handle(Delivery<String> d) { return Outcome.ack(); }
                        }
                        """)
                .source("com.acme.two.Second", """
                        package com.acme.two;
                        import dev.settle.sdk.*;
                        public class Second implements Handler<byte[]> {
                            public Outcome handle(Delivery<byte[]> d) { return Outcome.drop(); }
                        }
                        """)
                .services("com.acme.two.First", "com.acme.two.Second", "com.acme.two.First")
                .build();

        // Records the context class loader of every call, and counts close() calls.
        lifecycleJar = TestJar.at(dir.resolve("lifecycle.jar"))
                .source("com.acme.life.Recorder", """
                        package com.acme.life;
                        import dev.settle.sdk.*;
                        import java.util.*;
                        public class Recorder implements Handler<String>, java.util.function.Supplier<Object> {
                            private final Map<String, Object> seen = Collections.synchronizedMap(new LinkedHashMap<>());
                            private int closes;
                            public void open(HandlerContext context) {
                                seen.put("open", Thread.currentThread().getContextClassLoader());
                                seen.put("subscription", context.subscription());
                            }
                            public Outcome handle(Delivery<String> d) {
                                seen.put("handle", Thread.currentThread().getContextClassLoader());
                                if (d.value().equals("boom")) {
                                    throw new IllegalStateException("boom");
                                }
                                return Outcome.retryAfter(java.time.Duration.ofSeconds(2));
                            }
                            public void close() {
                                seen.put("close", Thread.currentThread().getContextClassLoader());
                                seen.put("closes", ++closes);
                                throw new IllegalStateException("failing to close is logged, not thrown");
                            }
                            public Object get() { return seen; }
                        }
                        """)
                .services("com.acme.life.Recorder")
                .build();
    }

    @AfterEach
    void closeLoader() {
        loader.close();
    }

    @Test
    void theOneDeclaredHandlerIsTakenWhenNoneIsNamed() throws Exception {
        LoadedHandler loaded = loader.load(singleJar, Optional.empty());

        assertThat(loaded.className()).isEqualTo("com.acme.single.Only");
        assertThat(loaded.handler().getClass().getName()).isEqualTo("com.acme.single.Only");
        assertThat(loaded.handler().getClass().getClassLoader()).isSameAs(loaded.classLoader());
        assertThat(loaded.jar()).isEqualTo(singleJar.toAbsolutePath().normalize());
        assertThat(loaded.version()).contains("1.4.2");
        assertThat(loaded.messageType()).isEqualTo(String.class);
    }

    @Test
    void theNamedHandlerIsTakenAmongSeveral() throws Exception {
        LoadedHandler second = loader.load(twoJar, Optional.of("com.acme.two.Second"));

        assertThat(second.className()).isEqualTo("com.acme.two.Second");
        assertThat(second.messageType()).isEqualTo(byte[].class);
        assertThat(second.version()).isEmpty();
        assertThat(second.handle(FakeDelivery.of(new byte[] {1}))).isSameAs(Outcome.drop());
    }

    @Test
    void declaredHandlersListsTheServicesFileInOrderWithoutDuplicatesOrComments() throws Exception {
        assertThat(loader.declaredHandlers(twoJar)).containsExactly("com.acme.two.First", "com.acme.two.Second");
        assertThat(loader.declaredHandlers(singleJar)).containsExactly("com.acme.single.Only");
    }

    @Test
    void declaredHandlersIsEmptyForAJarThatDeclaresNone() throws Exception {
        Path plain = TestJar.at(dir.resolve("plain.jar"))
                .resource("readme.txt", "no handler here")
                .build();

        assertThat(loader.declaredHandlers(plain)).isEmpty();
    }

    @Test
    void declaredHandlersOfAFolderSpansAllItsJars() throws Exception {
        Path folder = Files.createDirectory(dir.resolve("folder-of-two"));
        Files.copy(twoJar, folder.resolve("b.jar"));
        Files.copy(singleJar, folder.resolve("a.jar"));
        Files.writeString(folder.resolve("notes.txt"), "ignored: not a .jar");

        assertThat(loader.declaredHandlers(folder))
                .containsExactly("com.acme.single.Only", "com.acme.two.First", "com.acme.two.Second");
        assertThat(loader.load(folder, Optional.of("com.acme.single.Only")).version())
                .contains("1.4.2");
    }

    @Test
    void everyLoadCreatesANewHandlerInAClassLoaderOfItsOwn() throws Exception {
        LoadedHandler first = loader.load(twoJar, Optional.of("com.acme.two.First"));
        LoadedHandler again = loader.load(twoJar, Optional.of("com.acme.two.First"));
        LoadedHandler second = loader.load(twoJar, Optional.of("com.acme.two.Second"));

        assertThat(again.handler()).isNotSameAs(first.handler());
        // One loader per subscription and generation (docs/live-code.md, "Class loaders"): no statics shared.
        assertThat(again.classLoader()).isNotSameAs(first.classLoader());
        assertThat(second.classLoader()).isNotSameAs(first.classLoader()).isNotSameAs(again.classLoader());
        assertThat(loader.load(singleJar, Optional.empty()).classLoader()).isNotSameAs(first.classLoader());
    }

    @Test
    void theContextClassLoaderIsTheHandlersDuringOpenHandleAndCloseAndRestoredAfter() throws Exception {
        LoadedHandler loaded = loader.load(lifecycleJar, Optional.empty());
        ClassLoader before = new ClassLoader(null) {};
        Thread.currentThread().setContextClassLoader(before);
        try {
            loaded.open(context("orders-processor"));
            assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(before);

            Outcome outcome = loaded.callInHandlerContext(() -> loaded.handler().handle(FakeDelivery.of("order")));
            assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(before);

            loaded.close();
            assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(before);

            assertThat(outcome).isEqualTo(Outcome.retryAfter(java.time.Duration.ofSeconds(2)));
            assertThat(seen(loaded)).containsEntry("subscription", "orders-processor");
            // The handler's loader behind its safety net, the same one for every call; let go of once closed.
            ClassLoader context = (ClassLoader) seen(loaded).get("open");
            assertThat(context).isInstanceOf(SafetyNetClassLoader.class);
            assertThat(seen(loaded)).containsEntry("handle", context).containsEntry("close", context);
            assertThatThrownBy(() -> context.loadClass(loaded.className()))
                    .isInstanceOf(ClassNotFoundException.class)
                    .hasMessageContaining("is closed");
        } finally {
            Thread.currentThread().setContextClassLoader(getClass().getClassLoader());
        }
    }

    @Test
    void theContextClassLoaderIsRestoredWhenTheHandlerThrows() throws Exception {
        LoadedHandler loaded = loader.load(lifecycleJar, Optional.empty());
        ClassLoader before = Thread.currentThread().getContextClassLoader();

        assertThatThrownBy(() -> loaded.handle(FakeDelivery.of("boom")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("boom");
        assertThatThrownBy(
                        () -> loaded.callInHandlerContext(() -> loaded.handler().handle(FakeDelivery.of("boom"))))
                .isInstanceOf(IllegalStateException.class);

        assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(before);
        // The handler's loader behind its safety net.
        ClassLoader context = (ClassLoader) seen(loaded).get("handle");
        assertThat(context).isInstanceOf(SafetyNetClassLoader.class);
        assertThat(context.loadClass(loaded.className()))
                .isSameAs(loaded.handler().getClass());
    }

    @Test
    void closeCallsTheHandlersCloseOnceAndNeverThrows() throws Exception {
        LoadedHandler loaded = loader.load(lifecycleJar, Optional.empty());
        loaded.open(context("orders-processor"));

        loaded.close();
        loaded.close();

        assertThat(seen(loaded)).containsEntry("closes", 1);
    }

    @Test
    void aHandlerThatWasNeverOpenedIsNotClosed() throws Exception {
        LoadedHandler loaded = loader.load(lifecycleJar, Optional.empty());

        loaded.close();

        assertThat(seen(loaded)).doesNotContainKey("close");
    }

    @Test
    void openRunsOnce() throws Exception {
        LoadedHandler loaded = loader.load(lifecycleJar, Optional.empty());
        loaded.open(context("orders-processor"));

        assertThatThrownBy(() -> loaded.open(context("orders-processor")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("handler com.acme.life.Recorder from " + loaded.jar() + " is already open");
    }

    @Test
    void closingTheLoaderClosesItsClassLoaders() throws Exception {
        LoadedHandler loaded = loader.load(singleJar, Optional.empty());

        loader.close();

        assertThatThrownBy(() -> Class.forName("com.acme.single.Later", false, loaded.classLoader()))
                .isInstanceOf(ClassNotFoundException.class);
        try (HandlerLoader other = new HandlerLoader()) {
            ClassLoader open = other.load(singleJar, Optional.empty()).classLoader();
            assertThat(Class.forName("com.acme.single.Later", false, open)).isNotNull();
        }
    }

    @Test
    void aClosedLoaderLoadsNothing() {
        loader.close();

        assertThatThrownBy(() -> loader.load(singleJar, Optional.empty()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("the handler loader is closed");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> seen(LoadedHandler loaded) {
        return (Map<String, Object>) ((Supplier<?>) loaded.handler()).get();
    }

    static HandlerContext context(String subscription) {
        return new HandlerContext() {
            @Override
            public String subscription() {
                return subscription;
            }

            @Override
            public List<String> topics() {
                return List.of("persistent://public/default/orders");
            }

            @Override
            public Map<String, String> config() {
                return Map.of();
            }
        };
    }
}
