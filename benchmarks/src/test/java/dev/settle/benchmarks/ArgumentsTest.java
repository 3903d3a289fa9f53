package dev.settle.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ArgumentsTest {

    @Test
    void noArgumentsRunTheFullProtocolOfEveryMeasurementButMemory() {
        Arguments arguments = Arguments.parse();

        assertThat(arguments.sizes()).isSameAs(Sizes.FULL);
        assertThat(arguments.compare()).isEmpty();
        assertThat(Arguments.MEASUREMENTS)
                .filteredOn(arguments::runs)
                .containsExactly(
                        "noop",
                        "tracing",
                        "journal",
                        "io",
                        "function",
                        "exactly",
                        "retry",
                        "held",
                        "keyhold",
                        "batch",
                        "breaker",
                        "scheduler",
                        "start",
                        "commands");
    }

    @Test
    void quickRunsTheMessagePathInFewerShorterRounds() {
        Arguments arguments = Arguments.parse("--quick");

        assertThat(arguments.sizes()).isSameAs(Sizes.QUICK);
        assertThat(Arguments.MEASUREMENTS).filteredOn(arguments::runs).containsExactly("noop", "function", "exactly");
        assertThat(Sizes.QUICK.rounds()).isLessThan(Sizes.FULL.rounds());
    }

    @Test
    void compareTakesARefAndRunsTheMessagePathInTheModeGiven() {
        Arguments arguments = Arguments.parse("--quick", "--compare", "HEAD~1");

        assertThat(arguments.sizes()).isSameAs(Sizes.QUICK);
        assertThat(arguments.compare()).contains("HEAD~1");
        assertThat(Arguments.MEASUREMENTS).filteredOn(arguments::runs).containsExactly("noop", "function", "exactly");
        assertThat(Arguments.parse("--compare", "main").sizes()).isSameAs(Sizes.FULL);
    }

    @Test
    void profileProfilesTheBrokerInAnyModeAndIsOffWithoutIt() {
        Arguments profiled = Arguments.parse("--quick", "--profile", "--only", "noop");

        assertThat(profiled.profile()).isTrue();
        assertThat(profiled.describe()).isEqualTo("quick mode, only noop, the broker profiled");
        assertThat(Arguments.parse("--quick").profile()).isFalse();
    }

    @Test
    void onlyRunsTheOneMeasurementInAnyModeAndWithACompare() {
        assertThat(Arguments.MEASUREMENTS)
                .filteredOn(Arguments.parse("--only", "memory")::runs)
                .containsExactly("memory");
        assertThat(Arguments.MEASUREMENTS)
                .filteredOn(Arguments.parse("--compare", "main", "--only", "function", "--quick")::runs)
                .containsExactly("function");
    }

    @Test
    void anUnknownArgumentIsRefusedByNameWithTheUsage() {
        assertThatThrownBy(() -> Arguments.parse("--fast"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown argument '--fast'")
                .hasMessageContaining(Arguments.USAGE);
    }

    @Test
    void anUnknownMeasurementIsRefusedWithTheOnesThereAre() {
        assertThatThrownBy(() -> Arguments.parse("--only", "nop"))
                .hasMessageContaining("--only 'nop': expected one of noop, tracing, journal, io, function, exactly");
    }

    @Test
    void anOptionWithoutItsValueIsRefused() {
        assertThatThrownBy(() -> Arguments.parse("--compare")).hasMessageContaining("'--compare' needs a value");
        assertThatThrownBy(() -> Arguments.parse("--compare", "--quick"))
                .hasMessageContaining("'--compare' needs a value");
        assertThatThrownBy(() -> Arguments.parse("--only")).hasMessageContaining("'--only' needs a value");
    }

    @Test
    void twoModesOrAnOptionGivenTwiceAreRefused() {
        assertThatThrownBy(() -> Arguments.parse("--quick", "--smoke"))
                .hasMessageContaining("'--smoke' after '--quick': choose one mode");
        assertThatThrownBy(() -> Arguments.parse("--compare", "a", "--compare", "b"))
                .hasMessageContaining("'--compare' given twice ('a' first)");
    }

    @Test
    void aCompareOfAMeasurementOffTheMessagePathIsRefused() {
        assertThatThrownBy(() -> Arguments.parse("--compare", "main", "--only", "start"))
                .hasMessageContaining("--only 'start' with --compare")
                .hasMessageContaining("noop, function, exactly");
    }
}
