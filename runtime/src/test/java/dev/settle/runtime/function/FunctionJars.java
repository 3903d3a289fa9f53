package dev.settle.runtime.function;

import dev.settle.runtime.isolation.HandlerWork;
import dev.settle.runtime.isolation.TestJar;
import java.nio.file.Path;

/**
 * Function JARs written the way public Pulsar Function repositories write theirs (each in its own JAR, compiled at
 * test time against pulsar-functions-api), for the integration tests.
 */
final class FunctionJars {
    private FunctionJars() {}

    /** {@code com.example.identity.Identity}: returns its input, a {@code Function<String, String>}. */
    static Path identity(Path folder) {
        return TestJar.at(folder.resolve("identity.jar"))
                .source("com.example.identity.Identity", """
                        package com.example.identity;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        public class Identity implements Function<String, String> {
                            @Override
                            public String process(String input, Context context) {
                                return input;
                            }
                        }
                        """)
                .build();
    }

    /** Counts the words of a sentence at least {@code minLength} long; logs through the context's logger. */
    static Path wordCount(Path folder) {
        return TestJar.at(folder.resolve("word-count.jar"))
                .source("com.example.wordcount.WordCountFunction", """
                        package com.example.wordcount;

                        import java.util.Arrays;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        import org.slf4j.Logger;

                        /** Emits how many words of the sentence are long enough to count. */
                        public class WordCountFunction implements Function<String, String> {
                            @Override
                            public String process(String sentence, Context context) {
                                Logger log = context.getLogger();
                                int minLength = Integer.parseInt(
                                        (String) context.getUserConfigValueOrDefault("minLength", "1"));
                                long words = Arrays.stream(sentence.split("\\\\s+"))
                                        .filter(word -> word.length() >= minLength)
                                        .count();
                                log.info("{} words of at least {} letters in '{}'", words, minLength, sentence);
                                context.recordMetric("words", words);
                                return sentence + "=" + words;
                            }
                        }
                        """)
                .build();
    }

    /**
     * Routes by the record's key and properties: "vip" messages to a second topic through newOutputMessage (with
     * the key and a property of its own), everything else returned to the output.
     */
    static Path router(Path folder) {
        return TestJar.at(folder.resolve("router.jar"))
                .source("com.example.routing.PriorityRouter", """
                        package com.example.routing;

                        import org.apache.pulsar.client.api.Schema;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        import org.apache.pulsar.functions.api.Record;

                        public class PriorityRouter implements Function<String, String> {
                            private String priorityTopic;

                            @Override
                            public void initialize(Context context) {
                                priorityTopic = (String) context.getUserConfigValue("priorityTopic")
                                        .orElseThrow(() -> new IllegalArgumentException("priorityTopic is required"));
                            }

                            @Override
                            public String process(String input, Context context) throws Exception {
                                Record<?> record = context.getCurrentRecord();
                                String tier = record.getProperties().getOrDefault("tier", "standard");
                                if (!tier.equals("vip")) {
                                    return input.toLowerCase();
                                }
                                context.newOutputMessage(priorityTopic, Schema.STRING)
                                        .key(record.getKey().orElse("anonymous"))
                                        .property("routed-from", record.getTopicName().orElse("?"))
                                        .value(input.toUpperCase())
                                        .sendAsync();
                                return null;
                            }
                        }
                        """)
                .build();
    }

    /** Drops comments and blank lines (returns null), shouts the rest. */
    static Path filter(Path folder) {
        return TestJar.at(folder.resolve("filter.jar"))
                .source("com.example.filter.ExclamationFilter", """
                        package com.example.filter;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        public class ExclamationFilter implements Function<String, String> {
                            @Override
                            public String process(String input, Context context) {
                                if (input.isBlank() || input.startsWith("#")) {
                                    return null;
                                }
                                return input + "!";
                            }
                        }
                        """)
                .build();
    }

    /** Parses "sku:quantity"; a malformed line throws. */
    static Path parser(Path folder) {
        return TestJar.at(folder.resolve("parser.jar"))
                .source("com.example.orders.ParseOrder", """
                        package com.example.orders;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        public class ParseOrder implements Function<String, String> {
                            @Override
                            public String process(String line, Context context) {
                                String[] parts = line.split(":");
                                if (parts.length != 2) {
                                    throw new IllegalArgumentException("not sku:quantity: " + line);
                                }
                                int quantity = Integer.parseInt(parts[1].trim());
                                return parts[0].trim() + " x" + quantity;
                            }
                        }
                        """)
                .build();
    }

    /** A plain java.util.function.Function, no Pulsar types at all. */
    static Path upperCase(Path folder) {
        return TestJar.at(folder.resolve("upper.jar"))
                .source("com.example.text.UpperCase", """
                        package com.example.text;

                        import java.util.Locale;
                        import java.util.function.Function;

                        public class UpperCase implements Function<String, String> {
                            @Override
                            public String apply(String input) {
                                return input.toUpperCase(Locale.ROOT);
                            }
                        }
                        """)
                .build();
    }

    /** Answers later, from an executor of its own, as an async lookup would. */
    static Path async(Path folder) {
        return TestJar.at(folder.resolve("async.jar"))
                .source("com.example.async.AsyncEnricher", """
                        package com.example.async;

                        import java.util.concurrent.CompletableFuture;
                        import java.util.concurrent.ExecutorService;
                        import java.util.concurrent.Executors;
                        import java.util.concurrent.TimeUnit;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        public class AsyncEnricher implements Function<String, CompletableFuture<String>> {
                            private ExecutorService lookups;

                            @Override
                            public void initialize(Context context) {
                                lookups = Executors.newFixedThreadPool(2);
                            }

                            @Override
                            public CompletableFuture<String> process(String id, Context context) {
                                return CompletableFuture.supplyAsync(() -> {
                                    try {
                                        TimeUnit.MILLISECONDS.sleep(20);
                                    } catch (InterruptedException e) {
                                        Thread.currentThread().interrupt();
                                    }
                                    return id + ":enriched";
                                }, lookups);
                            }

                            @Override
                            public void close() {
                                lookups.shutdown();
                            }
                        }
                        """)
                .build();
    }

    /** A Settle handler that publishes an audit line for every delivery through the SDK, then acknowledges. */
    static Path auditingHandler(Path folder) {
        return TestJar.at(folder.resolve("auditing.jar"))
                .source("com.example.audit.AuditingHandler", """
                        package com.example.audit;

                        import dev.settle.sdk.*;
                        import java.util.Map;

                        public class AuditingHandler implements Handler<String> {
                            private Publisher<String> audit;

                            @Override
                            public void open(HandlerContext context) {
                                audit = context.publisher(context.config().get("auditTopic"), String.class);
                            }

                            @Override
                            public Outcome handle(Delivery<String> delivery) {
                                audit.publish(delivery, "seen " + delivery.value(), delivery.key().orElse(null),
                                        Map.of("attempt", Integer.toString(delivery.attempt())));
                                return Outcome.ack();
                            }
                        }
                        """)
                .services("com.example.audit.AuditingHandler")
                .build();
    }

    /** A handler and a function that throw by payload: "invalid" an IllegalArgumentException, "down" a ConnectException. */
    static Path throwing(Path folder) {
        return TestJar.at(folder.resolve("throwing.jar"))
                .source("com.example.errors.ThrowingHandler", """
                        package com.example.errors;

                        import dev.settle.sdk.*;

                        public class ThrowingHandler implements Handler<String> {
                            @Override
                            public Outcome handle(Delivery<String> delivery) throws Exception {
                                return ThrowingFunction.check(delivery.value(), delivery.attempt());
                            }
                        }
                        """)
                .source("com.example.errors.ThrowingFunction", """
                        package com.example.errors;

                        import java.net.ConnectException;
                        import dev.settle.sdk.Outcome;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        public class ThrowingFunction implements Function<String, String> {
                            static Outcome check(String value, int attempt) throws Exception {
                                if (value.equals("invalid")) {
                                    throw new InvalidOrderException(value);
                                }
                                if (value.equals("down") && attempt == 1) {
                                    throw new ConnectException("the downstream service is down");
                                }
                                return Outcome.ack();
                            }

                            @Override
                            public String process(String input, Context context) throws Exception {
                                check(input, context.getCurrentRecord().getMessage().get().getRedeliveryCount() + 1);
                                return input + " ok";
                            }
                        }
                        """)
                .source("com.example.errors.InvalidOrderException", """
                        package com.example.errors;

                        public class InvalidOrderException extends IllegalArgumentException {
                            public InvalidOrderException(String message) {
                                super(message);
                            }
                        }
                        """)
                .services("com.example.errors.ThrowingHandler")
                .build();
    }

    /** Acknowledges by hand: fails a record's first attempt with fail(), acks the second with ack(). */
    static Path manualAck(Path folder) {
        return TestJar.at(folder.resolve("manual.jar"))
                .source("com.example.manual.ManualAck", """
                        package com.example.manual;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        import org.apache.pulsar.functions.api.Record;

                        public class ManualAck implements Function<String, String> {
                            @Override
                            public String process(String input, Context context) {
                                Record<?> record = context.getCurrentRecord();
                                int attempt = record.getMessage().get().getRedeliveryCount() + 1;
                                if (attempt == 1) {
                                    record.fail();
                                } else {
                                    record.ack();
                                }
                                return input + " attempt " + attempt;
                            }
                        }
                        """)
                .build();
    }
    /**
     * A folder of JARs as a function with SerDes is deployed: {@code serdes.jar} and the Kryo and Jackson JARs it
     * uses (from {@code target/function-libs}, on no class path of the runtime). {@code OrderSummary} takes an
     * {@code Order} decoded by {@code JacksonOrderSerDe} and returns a {@code String} encoded by
     * {@code KryoStringSerDe}.
     */
    static Path serdes(Path folder) throws java.io.IOException {
        Path functions = java.nio.file.Files.createDirectories(folder.resolve("serdes"));
        TestJar jar = TestJar.at(functions.resolve("serdes.jar"));
        try (var libs = java.nio.file.Files.list(Path.of("target/function-libs"))) {
            for (Path lib : libs.toList()) {
                jar.compiledAgainst(lib);
                java.nio.file.Files.copy(lib, functions.resolve(lib.getFileName()));
            }
        }
        orderSerDes(jar).source("com.example.serde.OrderSummary", """
                        package com.example.serde;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        public class OrderSummary implements Function<Order, String> {
                            @Override
                            public String process(Order order, Context context) {
                                return order.id + " costs " + order.quantity * order.price;
                            }
                        }
                        """).build();
        return functions;
    }
    /**
     * Adds {@code com.example.serde.Order} and its SerDes, {@code JacksonOrderSerDe} and {@code KryoStringSerDe}, as a
     * function JAR with SerDes has them (Jackson and Kryo must be beside it or bundled in it).
     */
    static TestJar orderSerDes(TestJar jar) {
        return jar.source("com.example.serde.Order", """
                        package com.example.serde;
                        public class Order {
                            public String id;
                            public int quantity;
                            public double price;
                        }
                        """)
                .source("com.example.serde.JacksonOrderSerDe", """
                        package com.example.serde;

                        import com.fasterxml.jackson.databind.ObjectMapper;
                        import java.io.IOException;
                        import java.io.UncheckedIOException;
                        import org.apache.pulsar.functions.api.SerDe;

                        public class JacksonOrderSerDe implements SerDe<Order> {
                            private static final ObjectMapper MAPPER = new ObjectMapper();

                            @Override
                            public Order deserialize(byte[] input) {
                                try {
                                    return MAPPER.readValue(input, Order.class);
                                } catch (IOException e) {
                                    throw new UncheckedIOException(e);
                                }
                            }

                            @Override
                            public byte[] serialize(Order input) {
                                try {
                                    return MAPPER.writeValueAsBytes(input);
                                } catch (IOException e) {
                                    throw new UncheckedIOException(e);
                                }
                            }
                        }
                        """)
                .source("com.example.serde.KryoStringSerDe", """
                        package com.example.serde;

                        import com.esotericsoftware.kryo.Kryo;
                        import com.esotericsoftware.kryo.io.Input;
                        import com.esotericsoftware.kryo.io.Output;
                        import org.apache.pulsar.functions.api.SerDe;

                        public class KryoStringSerDe implements SerDe<String> {
                            private static final ThreadLocal<Kryo> KRYO = ThreadLocal.withInitial(Kryo::new);

                            @Override
                            public String deserialize(byte[] input) {
                                return KRYO.get().readObject(new Input(input), String.class);
                            }

                            @Override
                            public byte[] serialize(String input) {
                                Output output = new Output(64, -1);
                                KRYO.get().writeObject(output, input);
                                return output.toBytes();
                            }
                        }
                        """);
    }

    /** Gives up for good on its first message: {@code context.fatal}, as functions that meet a broken setup do. */
    static Path fatal(Path folder) {
        return TestJar.at(folder.resolve("give-up.jar"))
                .source("com.example.fatal.GiveUp", """
                        package com.example.fatal;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        public class GiveUp implements Function<String, Void> {
                            @Override
                            public Void process(String input, Context context) {
                                context.fatal(new IllegalStateException("cannot go on with " + input));
                                return null;
                            }
                        }
                        """)
                .build();
    }
    /** Counts each word in the function's state and returns the word with its count so far. */
    static Path wordCounter(Path folder) {
        return TestJar.at(folder.resolve("counter.jar"))
                .source("com.example.state.WordCounter", """
                        package com.example.state;

                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;

                        public class WordCounter implements Function<String, String> {
                            @Override
                            public String process(String word, Context context) {
                                context.incrCounter(word, 1);
                                return word + "=" + context.getCounter(word);
                            }
                        }
                        """)
                .build();
    }

    /**
     * Window functions as Pulsar's examples write them, several in one JAR: a {@code WindowFunction} summing a window
     * of numbers (logging and publishing through its {@code WindowContext}), and a {@code java.util.function.Function}
     * of a collection joining a window of words.
     */
    static Path windows(Path folder) {
        return TestJar.at(folder.resolve("windows.jar"))
                .source("com.example.windows.SumWindow", """
                        package com.example.windows;

                        import java.util.Collection;
                        import org.apache.pulsar.functions.api.Record;
                        import org.apache.pulsar.functions.api.WindowContext;
                        import org.apache.pulsar.functions.api.WindowFunction;

                        /** Sums a window of numbers, as "sum=N of K". */
                        public class SumWindow implements WindowFunction<String, String> {
                            @Override
                            public String process(Collection<Record<String>> inputs, WindowContext context) {
                                long sum = 0;
                                for (Record<String> record : inputs) {
                                    sum += Long.parseLong(record.getValue());
                                }
                                context.getLogger().info("window of {} sums to {}", inputs.size(), sum);
                                return "sum=" + sum + " of " + inputs.size();
                            }
                        }
                        """)
                .source("com.example.windows.JoinWords", """
                        package com.example.windows;

                        import java.util.Collection;
                        import java.util.function.Function;

                        /** Joins a window of words with spaces. */
                        public class JoinWords implements Function<Collection<String>, String> {
                            @Override
                            public String apply(Collection<String> words) {
                                return String.join(" ", words);
                            }
                        }
                        """)
                .build();
    }

    /** A plain function that sleeps an hour on every input, as one stuck on a slow call would; it heeds interrupts. */
    static Path sleeper(Path folder) {
        return TestJar.at(folder.resolve("sleeper.jar"))
                .source("com.example.slow.Sleeper", """
                        package com.example.slow;

                        import java.util.function.Function;

                        public class Sleeper implements Function<String, String> {
                            @Override
                            public String apply(String input) {
                                try {
                                    // A function that would run an hour: the lease must interrupt this pause.
                                    %s
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                    throw new IllegalStateException("interrupted", e);
                                }
                                return input;
                            }
                        }
                        """.formatted(HandlerWork.pause(3_600_000)))
                .build();
    }
}
