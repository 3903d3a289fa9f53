package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A thread that a handler or a function starts while it is being made (its static initialiser, its constructor)
 * inherits the safety net, not its class loader, as one started in {@code open} or a call does: once the code is
 * closed, the net lets go of the loader, so the thread left behind cannot pin a retired generation.
 */
class LeftBehindThreadsTest {
    /** A thread that waits until interrupted, named {@code name}, started from {@code where}. */
    private static String leak(String name) {
        return "{ Thread t = new Thread(() -> { try { new java.util.concurrent.CountDownLatch(1).await(); }"
                + " catch (InterruptedException e) { } },"
                + " \"" + name + "\"); t.setDaemon(true); t.start(); }";
    }

    @TempDir
    static Path dir;

    static Path handlerJar;
    static Path functionJar;

    private final HandlerLoader loader = new HandlerLoader();

    @BeforeAll
    static void buildJars() throws IOException {
        handlerJar = TestJar.at(dir.resolve("leaky-handler.jar"))
                .source("com.acme.leak.Leaky", """
                        package com.acme.leak;
                        import dev.settle.sdk.*;
                        public class Leaky implements Handler<String> {
                            static %s
                            public Leaky() %s
                            public Outcome handle(Delivery<String> d) { return Outcome.ack(); }
                        }
                        """.formatted(
                                leak("leaky-static-initialiser"), leak("leaky-handler-constructor")))
                .services("com.acme.leak.Leaky")
                .build();
        functionJar = TestJar.at(dir.resolve("leaky-function.jar"))
                .source("com.acme.leak.LeakyFunction", """
                        package com.acme.leak;
                        public class LeakyFunction implements java.util.function.Function<String, String> {
                            public LeakyFunction() %s
                            public String apply(String input) { return input; }
                        }
                        """.formatted(leak("leaky-function-constructor")))
                .build();
    }

    @AfterEach
    void stopThreadsAndCloseLoader() {
        Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().startsWith("leaky-"))
                .forEach(Thread::interrupt);
        loader.close();
    }

    @Test
    void threadsAHandlerStartsInItsStaticInitialiserOrConstructorHoldOnlyTheNetOnceItIsClosed() throws Exception {
        LoadedHandler loaded = loader.load(handlerJar, Optional.empty());

        for (String name : new String[] {"leaky-static-initialiser", "leaky-handler-constructor"}) {
            ClassLoader context = thread(name).getContextClassLoader();
            assertThat(context).as(name).isInstanceOf(SafetyNetClassLoader.class);
            assertThat(ContextClassLoader.isOrWraps(context, loaded.classLoader()))
                    .as(name)
                    .isTrue();
        }
        loaded.close();

        for (String name : new String[] {"leaky-static-initialiser", "leaky-handler-constructor"}) {
            ClassLoader context = thread(name).getContextClassLoader();
            assertThatThrownBy(() -> context.loadClass("com.acme.leak.Leaky"))
                    .as(name)
                    .isInstanceOf(ClassNotFoundException.class)
                    .hasMessageContaining("is closed");
        }
    }

    @Test
    void aThreadAFunctionStartsInItsConstructorHoldsOnlyTheNetOnceItIsCut() throws Exception {
        LoadedFunction loaded = loader.loadFunction(functionJar, "com.acme.leak.LeakyFunction");

        ClassLoader context = thread("leaky-function-constructor").getContextClassLoader();
        assertThat(context).isSameAs(loaded.contextLoader()).isInstanceOf(SafetyNetClassLoader.class);
        assertThat(context.loadClass("com.acme.leak.LeakyFunction"))
                .isSameAs(loaded.instance().getClass());
        loaded.cutContextLoader();

        assertThatThrownBy(() -> context.loadClass("com.acme.leak.LeakyFunction"))
                .isInstanceOf(ClassNotFoundException.class)
                .hasMessageContaining("is closed");
    }

    private static Thread thread(String name) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no thread " + name + " runs"));
    }
}
