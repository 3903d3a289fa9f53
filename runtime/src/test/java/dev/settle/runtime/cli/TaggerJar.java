package dev.settle.runtime.cli;

import dev.settle.runtime.isolation.HandlerWork;
import dev.settle.runtime.isolation.TestJar;
import java.nio.file.Path;

/** The function the kill tests run: returns {@code "tagged " + input} after a pause, so a kill can find work in flight. */
final class TaggerJar {
    private TaggerJar() {}

    /**
     * Builds {@code jar} with the function {@code className} (in a package of its own) pausing {@code pauseMillis}, or
     * not at all at 0.
     */
    static void build(Path jar, String className, int pauseMillis) {
        int dot = className.lastIndexOf('.');
        TestJar.at(jar)
                .source(className, """
                        package %s;
                        import org.apache.pulsar.functions.api.Context;
                        import org.apache.pulsar.functions.api.Function;
                        public class %s implements Function<String, String> {
                            @Override public String process(String input, Context context) throws Exception {
                                %s
                                return "tagged " + input;
                            }
                        }
                        """.formatted(
                                className.substring(0, dot),
                                className.substring(dot + 1),
                                // Deliberately slow when asked: a kill or a reload must find calls in flight.
                                pauseMillis == 0 ? "" : HandlerWork.pause(pauseMillis)))
                .build();
    }
}
