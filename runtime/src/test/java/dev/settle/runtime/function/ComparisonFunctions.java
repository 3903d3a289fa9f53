package dev.settle.runtime.function;

import dev.settle.runtime.isolation.TestJar;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The functions {@code FunctionsComparisonIT} runs under Settle and under LocalRunner, written the way public Pulsar
 * Function repositories write them: a starter JAR of several functions (as the Functions examples and starter
 * projects ship them), and a fat JAR that bundles its libraries (Jackson, Kryo) and Pulsar's own Functions runtime
 * (pulsar-functions-instance, as a JAR built without {@code provided} scope does), with its SerDes.
 */
final class ComparisonFunctions {
    private ComparisonFunctions() {}

    static final String STARTER = "com.example.starter.";
    static final String ORDERS = "com.example.orders.";

    /** Ten functions in one JAR: plain, user config, logger, current record, newOutputMessage, state, windows. */
    static Path starter(Path folder) {
        return TestJar.at(folder.resolve("starter.jar"))
                .source(STARTER + "ExclamationFunction", """
                        package com.example.starter;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        public class ExclamationFunction implements Function<String, String> {
                            @Override
                            public String process(String input, Context context) {
                                return input + "!";
                            }
                        }
                        """)
                .source(STARTER + "GreetingFunction", """
                        package com.example.starter;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        /** Greets with the user config's greeting. */
                        public class GreetingFunction implements Function<String, String> {
                            @Override
                            public String process(String input, Context context) {
                                String greeting = (String) context.getUserConfigValueOrDefault("greeting", "Hello");
                                return greeting + ", " + input;
                            }
                        }
                        """)
                .source(STARTER + "LoggingFunction", """
                        package com.example.starter;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        import org.slf4j.Logger;

                        public class LoggingFunction implements Function<String, String> {
                            @Override
                            public String process(String input, Context context) {
                                Logger log = context.getLogger();
                                log.info("function {} got '{}'", context.getFunctionName(), input);
                                if (input.isBlank()) {
                                    log.warn("blank input");
                                }
                                return "length=" + input.length();
                            }
                        }
                        """)
                .source(STARTER + "RecordEchoFunction", """
                        package com.example.starter;

                        import java.util.TreeMap;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        import org.apache.pulsar.functions.api.Record;

                        /** Says what the current record carries. */
                        public class RecordEchoFunction implements Function<String, String> {
                            @Override
                            public String process(String input, Context context) {
                                Record<?> record = context.getCurrentRecord();
                                return input + " key=" + record.getKey().orElse("-")
                                        + " topic=" + record.getTopicName().orElse("-")
                                        + " properties=" + new TreeMap<>(record.getProperties());
                            }
                        }
                        """)
                .source(STARTER + "PriorityRouter", """
                        package com.example.starter;

                        import org.apache.pulsar.client.api.Schema;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        import org.apache.pulsar.functions.api.Record;

                        /** Sends each input on with newOutputMessage: a key and a property of its own. */
                        public class PriorityRouter implements Function<String, Void> {
                            @Override
                            public Void process(String input, Context context) throws Exception {
                                Record<?> record = context.getCurrentRecord();
                                context.newOutputMessage(context.getOutputTopic(), Schema.STRING)
                                        .key(record.getKey().orElse("anonymous") + "-routed")
                                        .property("tier", record.getProperties().getOrDefault("tier", "standard"))
                                        .value(input.toUpperCase())
                                        .send();
                                return null;
                            }
                        }
                        """)
                .source(STARTER + "ReverseFunction", """
                        package com.example.starter;

                        import java.util.function.Function;

                        public class ReverseFunction implements Function<String, String> {
                            @Override
                            public String apply(String input) {
                                return new StringBuilder(input).reverse().toString();
                            }
                        }
                        """)
                .source(STARTER + "WordCountFunction", """
                        package com.example.starter;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        /** Counts each word in the function's state, as the Functions word-count example does. */
                        public class WordCountFunction implements Function<String, String> {
                            @Override
                            public String process(String word, Context context) {
                                context.incrCounter(word, 1);
                                return word + "=" + context.getCounter(word);
                            }
                        }
                        """)
                .source(STARTER + "SplitterFunction", """
                        package com.example.starter;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        /** Publishes each word of a sentence with context.publish. */
                        public class SplitterFunction implements Function<String, Void> {
                            @Override
                            public Void process(String sentence, Context context) {
                                for (String word : sentence.split(" ")) {
                                    context.publish(context.getOutputTopic(), word);
                                }
                                return null;
                            }
                        }
                        """)
                .source(STARTER + "SumWindowFunction", """
                        package com.example.starter;

                        import java.util.Collection;
                        import org.apache.pulsar.functions.api.Record;
                        import org.apache.pulsar.functions.api.WindowContext;
                        import org.apache.pulsar.functions.api.WindowFunction;

                        public class SumWindowFunction implements WindowFunction<String, String> {
                            @Override
                            public String process(Collection<Record<String>> inputs, WindowContext context) {
                                long sum = 0;
                                for (Record<String> input : inputs) {
                                    sum += Long.parseLong(input.getValue());
                                }
                                context.getLogger().info("window of {}: {}", inputs.size(), sum);
                                return "sum=" + sum;
                            }
                        }
                        """)
                .source(STARTER + "JoinWordsFunction", """
                        package com.example.starter;

                        import java.util.Collection;
                        import java.util.function.Function;

                        public class JoinWordsFunction implements Function<Collection<String>, String> {
                            @Override
                            public String apply(Collection<String> words) {
                                return String.join(" ", words);
                            }
                        }
                        """)
                .build();
    }

    /**
     * A fat JAR: Jackson and Kryo (with Kryo's libraries) and Pulsar's Functions runtime (whose
     * {@code WindowContextImpl} calls state methods) packed in, with three functions: one decoding orders with a
     * Jackson SerDe and encoding its summary with a Kryo SerDe, one copying the input's properties into an output
     * record, one upper-casing.
     */
    static Path fat(Path folder) throws IOException {
        TestJar jar = TestJar.at(folder.resolve("orders-fat.jar"));
        try (var libs = Files.list(Path.of("target/function-libs"))) {
            for (Path lib : libs.sorted().toList()) {
                jar.bundling(lib);
            }
        }
        jar.bundling(functionsRuntime());
        return FunctionJars.orderSerDes(jar)
                .source(ORDERS + "OrderSummaryFunction", """
                        package com.example.orders;

                        import com.example.serde.Order;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        public class OrderSummaryFunction implements Function<Order, String> {
                            @Override
                            public String process(Order order, Context context) {
                                return order.id + ": " + order.quantity + " x " + order.price;
                            }
                        }
                        """)
                .source(ORDERS + "PropertyCopier", """
                        package com.example.orders;

                        import java.util.HashMap;
                        import java.util.Map;
                        import org.apache.pulsar.client.api.Schema;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        import org.apache.pulsar.functions.api.Record;

                        /** Returns an output record with the input's key and properties, and one property more. */
                        public class PropertyCopier implements Function<String, Record<String>> {
                            @Override
                            public Record<String> process(String input, Context context) {
                                Record<?> record = context.getCurrentRecord();
                                Map<String, String> properties = new HashMap<>(record.getProperties());
                                properties.put("copied-by", "copier");
                                var output = context.newOutputRecordBuilder(Schema.STRING)
                                        .value(input)
                                        .properties(properties);
                                record.getKey().ifPresent(output::key);
                                return output.build();
                            }
                        }
                        """)
                .source(ORDERS + "UpperCaseFunction", """
                        package com.example.orders;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        public class UpperCaseFunction implements Function<String, String> {
                            @Override
                            public String process(String input, Context context) {
                                return input.toUpperCase();
                            }
                        }
                        """)
                .build();
    }

    /** pulsar-functions-instance, Pulsar's Functions runtime, as the build copied it (see this module's POM). */
    private static Path functionsRuntime() throws IOException {
        try (var copied = Files.list(Path.of("target/functions-runtime"))) {
            return copied.filter(jar -> jar.getFileName().toString().startsWith("pulsar-functions-instance-"))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException("target/functions-runtime has no"
                            + " pulsar-functions-instance JAR: build with the generate-test-resources phase"));
        }
    }
}
