package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.ref.WeakReference;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SafetyNetClassLoaderTest {

    @Test
    void itLoadsThroughTheHandlersLoaderUntilCutThenSaysWhy() throws Exception {
        ClassLoader handlers = new URLClassLoader(new URL[0], getClass().getClassLoader());
        SafetyNetClassLoader net = new SafetyNetClassLoader(handlers, "com.acme.Orders");

        assertThat(net.loadClass(getClass().getName()))
                .isSameAs(handlers.loadClass(getClass().getName()));
        net.cut();

        assertThatThrownBy(() -> net.loadClass(getClass().getName()))
                .isInstanceOf(ClassNotFoundException.class)
                .hasMessageContaining("handler com.acme.Orders is closed")
                .hasMessageContaining("stop the threads a handler starts in close()");
        assertThat(net.getResource("anything")).isNull();
        // The retired-loader check still names a thread left with the net as its context loader.
        assertThat(ContextClassLoader.isOrWraps(net, handlers)).isTrue();
        assertThat(ContextClassLoader.isOrWraps(net, getClass().getClassLoader()))
                .isFalse();
        assertThat(net.getResources("anything").hasMoreElements()).isFalse();
    }

    @Test
    void whatStillHoldsTheNetAfterTheCutNoLongerPinsTheHandlersLoader() {
        SafetyNetClassLoader net = netOverAnUnreachableLoader();

        net.cut();

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (handlers.get() != null) {
            assertThat(System.nanoTime())
                    .as("the handler's loader was not collected")
                    .isLessThan(deadline);
            System.gc();
        }
        // The net itself, as a thread left behind would, is still held here.
        assertThat(net).isNotNull();
    }

    /** The handler's loader, held weakly: only the net holds it strongly. */
    private WeakReference<ClassLoader> handlers;

    private SafetyNetClassLoader netOverAnUnreachableLoader() {
        ClassLoader loader = new URLClassLoader(new URL[0], null);
        handlers = new WeakReference<>(loader);
        return new SafetyNetClassLoader(loader, "com.acme.Orders");
    }
}
