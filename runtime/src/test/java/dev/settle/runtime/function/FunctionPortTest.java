package dev.settle.runtime.function;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.FunctionJarScan;
import dev.settle.runtime.isolation.LoadedFunction;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.time.ManualTime;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class FunctionPortTest {
    @Test
    void itsNameIsMadeOnceNotForEachSettlementThatNamesItsCode() {
        Function<String, String> shout = String::toUpperCase;
        LoadedFunction loaded = new LoadedFunction(
                "com.acme.Shout",
                shout,
                false,
                FunctionPortTest.class.getClassLoader(),
                String.class,
                String.class,
                Path.of("/opt/settle/shout.jar"),
                Optional.of("1.4.0"),
                new FunctionJarScan(List.of(), List.of()),
                false,
                Optional.empty());
        FunctionPort port = new FunctionPort(
                loaded,
                SubscriptionSpec.builder("shout", List.of("persistent://public/default/orders"))
                        .build(),
                null,
                new FunctionPort.Surroundings(
                        (name, value) -> {},
                        name -> null,
                        LoggerFactory.getLogger(FunctionPortTest.class),
                        topic -> Map.of(),
                        new ManualTime()));

        // The journal and tracing ask for it per settled message; the journal finds a text it wrote by identity.
        assertThat(port.toString())
                .isEqualTo("function com.acme.Shout 1.4.0 from /opt/settle/shout.jar")
                .isSameAs(port.toString());
    }
}
