package dev.settle.runtime.live;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.FunctionSettings;
import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.manifest.WindowSettings;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A canary of a Pulsar Function is refused, naming why (issue 46: a window spans keys, state is shared by keys). */
class CanaryRefusalTest {
    private static SubscriptionSpec function(Optional<String> state, Optional<WindowSettings> window) {
        return SubscriptionSpec.builder("counts", List.of("orders"))
                .function(
                        "com.acme.Counter",
                        new FunctionSettings(
                                Optional.empty(),
                                Optional.empty(),
                                Map.of(),
                                Map.of(),
                                Optional.empty(),
                                true,
                                state,
                                0,
                                1,
                                window))
                .build();
    }

    @Test
    void aWindowedFunctionIsRefusedBecauseAWindowSpansKeys() {
        assertThat(LiveCode.canaryRefusal(function(Optional.empty(), Optional.of(new WindowSettings(true, 10, 10)))))
                .isEqualTo("subscription 'counts' is a Pulsar Function with windowConfig: a window spans keys, so no"
                        + " slice of keys can run other code; change its jar: in the manifest instead (a reload"
                        + " swaps it)");
    }

    @Test
    void aFunctionWithStateIsRefusedBecauseBothGenerationsWouldWriteIt() {
        assertThat(LiveCode.canaryRefusal(function(Optional.of("persistent://acme/shop/state"), Optional.empty())))
                .startsWith("subscription 'counts' is a Pulsar Function with state (persistent://acme/shop/state):"
                        + " two generations would write the same keys' state");
    }

    @Test
    void anyOtherFunctionIsRefusedBecauseItKeepsNoGenerations() {
        assertThat(LiveCode.canaryRefusal(function(Optional.empty(), Optional.empty())))
                .startsWith("subscription 'counts' is a Pulsar Function: a function keeps no generations");
    }
}
