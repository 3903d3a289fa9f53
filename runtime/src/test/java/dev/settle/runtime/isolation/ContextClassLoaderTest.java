package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ContextClassLoaderTest {

    private final ClassLoader before = new ClassLoader(null) {};
    private final ClassLoader handlers = new ClassLoader(null) {};
    private ClassLoader original;

    @BeforeEach
    void setBefore() {
        original = Thread.currentThread().getContextClassLoader();
        Thread.currentThread().setContextClassLoader(before);
    }

    @AfterEach
    void restoreOriginal() {
        Thread.currentThread().setContextClassLoader(original);
    }

    @Test
    void theLoaderIsSetInsideTheBlockAndTheOldOneRestoredAfter() {
        try (ContextClassLoader ignored = ContextClassLoader.swap(handlers)) {
            assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(handlers);
        }

        assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(before);
    }

    @Test
    void theOldLoaderIsRestoredWhenTheBlockThrows() {
        assertThatThrownBy(() -> {
                    try (ContextClassLoader ignored = ContextClassLoader.swap(handlers)) {
                        throw new IllegalStateException("boom");
                    }
                })
                .hasMessage("boom");

        assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(before);
    }

    @Test
    void nestedSwapsUnwindInOrder() {
        ClassLoader inner = new ClassLoader(null) {};
        try (ContextClassLoader outer = ContextClassLoader.swap(handlers)) {
            try (ContextClassLoader nested = ContextClassLoader.swap(inner)) {
                assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(inner);
            }
            assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(handlers);
        }

        assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(before);
    }

    @Test
    void aNullPreviousLoaderIsRestoredAsNull() {
        Thread.currentThread().setContextClassLoader(null);

        try (ContextClassLoader ignored = ContextClassLoader.swap(handlers)) {
            assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(handlers);
        }

        assertThat(Thread.currentThread().getContextClassLoader()).isNull();
    }

    @Test
    void closeRestoresTheThreadThatSwappedNotTheOneThatCloses() throws Exception {
        ContextClassLoader swap = ContextClassLoader.swap(handlers);
        AtomicReference<ClassLoader> closerAfter = new AtomicReference<>();
        ClassLoader closersOwn = new ClassLoader(null) {};
        Thread closer = new Thread(() -> {
            swap.close();
            closerAfter.set(Thread.currentThread().getContextClassLoader());
        });
        closer.setContextClassLoader(closersOwn);
        closer.start();
        closer.join();

        assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(before);
        assertThat(closerAfter.get()).isSameAs(closersOwn);
    }

    @Test
    void aNullLoaderIsRefusedAndNothingChanges() {
        assertThatThrownBy(() -> ContextClassLoader.swap(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("loader");

        assertThat(Thread.currentThread().getContextClassLoader()).isSameAs(before);
    }
}
