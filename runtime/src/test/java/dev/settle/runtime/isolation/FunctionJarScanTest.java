package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The constant-pool scan of function JARs, on JARs compiled at test time. */
class FunctionJarScanTest {
    @TempDir
    Path folder;

    @Test
    void namesEveryUnsupportedContextMethodAJarCallsWithItsCallers() throws Exception {
        Path jar = TestJar.at(folder.resolve("stateful.jar"))
                .source("com.acme.Stateful", """
                        package com.acme;
                        import java.nio.ByteBuffer;
                        import org.apache.pulsar.functions.api.*;
                        public class Stateful implements Function<String, Void> {
                            @Override public Void process(String input, Context context) throws Exception {
                                context.incrCounter(input, 1);
                                context.putState("last", ByteBuffer.wrap(input.getBytes()));
                                context.getLogger().info("counted {}", input);
                                return null;
                            }
                        }
                        """)
                .source("com.acme.Helper", """
                        package com.acme;
                        import org.apache.pulsar.functions.api.BaseContext;
                        final class Helper {
                            static long count(BaseContext context, String key) {
                                return context.getCounter(key);
                            }
                        }
                        """)
                .build();

        FunctionJarScan scan = FunctionJarScan.of(List.of(jar), JarLimits.DEFAULT);

        assertThat(scan.unsupported())
                .extracting(FunctionJarScan.Reference::method)
                .containsExactlyInAnyOrder("incrCounter", "putState", "getCounter");
        assertThat(scan.unsupported())
                .filteredOn(reference -> reference.method().equals("getCounter"))
                .singleElement()
                .satisfies(reference -> assertThat(reference.callers()).containsExactly("com.acme.Helper"));
        assertThat(scan.bundledApis()).isEmpty();
    }

    @Test
    void aFunctionUsingOnlyWhatSettleServesHasNothingToReport() throws Exception {
        Path jar = TestJar.functions(folder.resolve("functions.jar"));

        FunctionJarScan scan = FunctionJarScan.of(List.of(jar), JarLimits.DEFAULT);

        assertThat(scan.unsupported()).isEmpty();
    }

    @Test
    void aJarBundlingTheFunctionsApiIsToldApart() throws Exception {
        Path jar = TestJar.at(folder.resolve("fat.jar"))
                .source("org.apache.pulsar.functions.api.Shadow", """
                        package org.apache.pulsar.functions.api;
                        public class Shadow {}
                        """)
                .source("com.acme.Plain", """
                        package com.acme;
                        public class Plain {}
                        """)
                .build();

        assertThat(FunctionJarScan.of(List.of(jar), JarLimits.DEFAULT).bundledApis())
                .containsExactly("org.apache.pulsar.functions.api");
    }

    @Test
    void everyUnsupportedMethodIsAContextMethodWithAdvice() {
        List<String> contextMethods = java.util.stream.Stream.of(
                        org.apache.pulsar.functions.api.Context.class.getMethods())
                .map(java.lang.reflect.Method::getName)
                .toList();
        assertThat(FunctionJarScan.UNSUPPORTED).allSatisfy((method, advice) -> {
            assertThat(contextMethods).contains(method);
            assertThat(advice).isNotBlank();
        });
    }
}
