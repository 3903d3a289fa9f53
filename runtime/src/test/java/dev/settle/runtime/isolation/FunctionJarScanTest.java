package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

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
                .source("com.acme.Calls", """
                        package com.acme;
                        import org.apache.pulsar.functions.api.Context;
                        public class Calls implements org.apache.pulsar.functions.api.Function<String, Long> {
                            @Override public Long process(String input, Context context) {
                                return Helper.count(context, input);
                            }
                        }
                        """)
                .build();

        FunctionJarScan stateful = FunctionJarScan.of(List.of(jar), JarLimits.DEFAULT, "com.acme.Stateful");
        FunctionJarScan calls = FunctionJarScan.of(List.of(jar), JarLimits.DEFAULT, "com.acme.Calls");

        assertThat(stateful.unsupported())
                .extracting(FunctionJarScan.Reference::method, FunctionJarScan.Reference::certain)
                .containsExactlyInAnyOrder(tuple("incrCounter", true), tuple("putState", true));
        assertThat(calls.unsupported()).singleElement().satisfies(reference -> {
            assertThat(reference.method()).isEqualTo("getCounter");
            assertThat(reference.callers()).containsExactly("com.acme.Helper");
            assertThat(reference.certain()).isFalse();
        });
        assertThat(stateful.bundledApis()).isEmpty();
    }

    @Test
    void aFunctionUsingOnlyWhatSettleServesHasNothingToReport() throws Exception {
        Path jar = TestJar.functions(folder.resolve("functions.jar"));

        FunctionJarScan scan = FunctionJarScan.of(List.of(jar), JarLimits.DEFAULT, "com.acme.EnrichFunction");

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

        assertThat(FunctionJarScan.of(List.of(jar), JarLimits.DEFAULT, "com.acme.Plain")
                        .bundledApis())
                .containsExactly("org.apache.pulsar.functions.api");
    }

    /**
     * A starter project's JAR: several functions, one of which counts words with state; the others must not be
     * judged by it (issue 26: they were refused with it).
     */
    @Test
    void aJarOfSeveralFunctionsIsJudgedByTheNamedFunctionOnly() throws Exception {
        Path jar = TestJar.at(folder.resolve("starter.jar"))
                .source("com.acme.Exclamation", """
                        package com.acme;
                        import java.util.function.Function;
                        public class Exclamation implements Function<String, String> {
                            @Override public String apply(String input) { return Punctuation.exclaim(input); }
                        }
                        """)
                .source("com.acme.Punctuation", """
                        package com.acme;
                        final class Punctuation {
                            static String exclaim(String text) { return text + "!"; }
                        }
                        """)
                .source("com.acme.WordCount", """
                        package com.acme;
                        import org.apache.pulsar.functions.api.*;
                        public class WordCount implements Function<String, Void> {
                            @Override public Void process(String input, Context context) {
                                for (String word : input.split(" ")) {
                                    context.incrCounter(Punctuation.exclaim(word), 1);
                                }
                                return null;
                            }
                        }
                        """)
                .build();

        assertThat(FunctionJarScan.of(List.of(jar), JarLimits.DEFAULT, "com.acme.Exclamation")
                        .unsupported())
                .isEmpty();
        assertThat(FunctionJarScan.of(List.of(jar), JarLimits.DEFAULT, "com.acme.WordCount")
                        .unsupported())
                .extracting(FunctionJarScan.Reference::method, FunctionJarScan.Reference::certain)
                .containsExactly(tuple("incrCounter", true));
    }

    /**
     * A fat JAR that bundles Pulsar's Functions runtime, whose windowing context calls {@code getCounter}: a
     * function that never reaches it has nothing to report.
     */
    @Test
    void aFatJarBundlingTheFunctionsRuntimeIsJudgedByWhatTheFunctionReaches() throws Exception {
        Path jar = TestJar.at(folder.resolve("fat.jar"))
                .source("org.apache.pulsar.functions.windowing.WindowContextImpl", """
                        package org.apache.pulsar.functions.windowing;
                        import org.apache.pulsar.functions.api.Context;
                        public class WindowContextImpl {
                            private final Context context;
                            public WindowContextImpl(Context context) { this.context = context; }
                            public long getCounter(String key) { return context.getCounter(key); }
                        }
                        """)
                .source("com.acme.CopyProperties", """
                        package com.acme;
                        import java.util.Map;
                        import org.apache.pulsar.functions.api.*;
                        public class CopyProperties implements Function<String, Void> {
                            @Override public Void process(String input, Context context) throws Exception {
                                Map<String, String> properties = context.getCurrentRecord().getProperties();
                                context.newOutputMessage(context.getOutputTopic(), org.apache.pulsar.client.api.Schema.STRING)
                                        .value(input).properties(properties).send();
                                return null;
                            }
                        }
                        """)
                .source("com.acme.Windowed", """
                        package com.acme;
                        import org.apache.pulsar.functions.api.*;
                        import org.apache.pulsar.functions.windowing.WindowContextImpl;
                        public class Windowed implements Function<String, Long> {
                            @Override public Long process(String input, Context context) {
                                return new WindowContextImpl(context).getCounter(input);
                            }
                        }
                        """)
                .build();

        assertThat(FunctionJarScan.of(List.of(jar), JarLimits.DEFAULT, "com.acme.CopyProperties")
                        .unsupported())
                .isEmpty();
        assertThat(FunctionJarScan.of(List.of(jar), JarLimits.DEFAULT, "com.acme.Windowed")
                        .unsupported())
                .extracting(FunctionJarScan.Reference::callers, FunctionJarScan.Reference::certain)
                .containsExactly(tuple(List.of("org.apache.pulsar.functions.windowing.WindowContextImpl"), false));
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
