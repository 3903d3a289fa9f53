package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.driver.SdkHandlerPort;
import dev.settle.runtime.live.CurrentGeneration;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.sdk.BatchResult;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.HandlerContext;
import dev.settle.sdk.Outcome;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A {@code BatchHandler} declared in its own services file is found, loaded and called like a handler (issue 47). */
class BatchHandlerLoadingTest {
    @TempDir
    static Path dir;

    static Path mixedJar;

    private final HandlerLoader loader = new HandlerLoader();

    @BeforeAll
    static void buildJar() {
        mixedJar = TestJar.at(dir.resolve("mixed.jar"))
                .source("com.acme.bulk.Bulk", """
                        package com.acme.bulk;
                        import dev.settle.sdk.*;
                        import java.util.*;
                        public class Bulk implements BatchHandler<String>, java.util.function.Supplier<Object> {
                            private final Map<String, Object> seen = Collections.synchronizedMap(new LinkedHashMap<>());
                            public void open(HandlerContext context) {
                                seen.put("open", Thread.currentThread().getContextClassLoader());
                            }
                            public BatchResult handle(List<Delivery<String>> batch) {
                                seen.put("handle", Thread.currentThread().getContextClassLoader());
                                seen.put("size", batch.size());
                                return BatchResult.create().drop(batch.get(0));
                            }
                            public void close() {
                                seen.put("close", Thread.currentThread().getContextClassLoader());
                            }
                            public Object get() { return seen; }
                        }
                        """)
                .source("com.acme.bulk.One", """
                        package com.acme.bulk;
                        import dev.settle.sdk.*;
                        public class One implements Handler<byte[]> {
                            public Outcome handle(Delivery<byte[]> d) { return Outcome.ack(); }
                        }
                        """)
                .services("com.acme.bulk.One")
                .resource(HandlerLoadException.BATCH_SERVICES_FILE, "# bulk writes\ncom.acme.bulk.Bulk\n")
                .build();
    }

    @AfterEach
    void closeLoader() {
        loader.close();
    }

    @Test
    void aJarDeclaresItsHandlersThenItsBatchHandlers() throws Exception {
        assertThat(loader.declaredHandlers(mixedJar)).containsExactly("com.acme.bulk.One", "com.acme.bulk.Bulk");
        assertThat(loader.load(mixedJar, Optional.of("com.acme.bulk.One")).isBatch())
                .isFalse();
    }

    @Test
    @SuppressWarnings("unchecked")
    void aBatchHandlerIsLoadedWithItsMessageTypeAndCalledInItsOwnLoaderThroughItsLifecycle() throws Exception {
        LoadedHandler loaded = loader.load(mixedJar, Optional.of("com.acme.bulk.Bulk"));

        assertThat(loaded.isBatch()).isTrue();
        assertThat(loaded.messageType()).isEqualTo(String.class);
        loaded.open(new NoContext());
        Delivery<Object> first = FakeDelivery.of("a");
        BatchResult result = loaded.handleBatch(List.of(first, FakeDelivery.of("b")));
        loaded.close();

        assertThat(result.entries()).containsExactly(new BatchResult.Entry(first, Outcome.drop()));
        Map<String, Object> seen = (Map<String, Object>) ((Supplier<Object>) loaded.instance()).get();
        assertThat(seen).containsEntry("size", 2);
        for (String call : List.of("open", "handle", "close")) {
            assertThat(seen.get(call))
                    .as("the context class loader of %s", call)
                    .isInstanceOf(SafetyNetClassLoader.class);
        }
    }

    @Test
    void aBatchHandlerIsNotPutBehindThePortOfOneMessage() throws Exception {
        LoadedHandler loaded = loader.load(mixedJar, Optional.of("com.acme.bulk.Bulk"));
        SubscriptionSpec spec = SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .build();

        assertThatThrownBy(() -> SdkHandlerPort.swappedIn(loaded, spec))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("com.acme.bulk.Bulk is a BatchHandler");
    }

    @Test
    void aBatchHandlerDoesNotFitASubscriptionRunningAHandlerOfOneMessage() throws Exception {
        LoadedHandler one = loader.load(mixedJar, Optional.of("com.acme.bulk.One"));
        LoadedHandler bulk = loader.load(mixedJar, Optional.of("com.acme.bulk.Bulk"));
        SubscriptionSpec spec = SubscriptionSpec.builder("orders", List.of("persistent://public/default/orders"))
                .build();
        CurrentGeneration running =
                CurrentGeneration.ofManifest(one, SdkHandlerPort.of(one, spec), () -> {}, Instant.EPOCH);

        assertThat(running.misfit(bulk, spec))
                .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
                .contains("handler com.acme.bulk.Bulk is a BatchHandler (many messages per call), but subscription"
                        + " 'orders' runs a Handler (one message per call)")
                .contains("change the manifest's jar and restart the runtime to run the BatchHandler");
        assertThat(running.misfit(one, spec)).isEmpty();
    }

    /** A context that serves nothing: the batch handler above never asks. */
    private static final class NoContext implements HandlerContext {
        @Override
        public String subscription() {
            return "orders";
        }

        @Override
        public List<String> topics() {
            return List.of("persistent://public/default/orders");
        }

        @Override
        public Map<String, String> config() {
            return Map.of();
        }
    }
}
