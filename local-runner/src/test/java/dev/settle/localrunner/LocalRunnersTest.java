package dev.settle.localrunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** How {@link LocalRunners} splits its arguments into one LocalRunner's each. */
class LocalRunnersTest {
    @Test
    void theGroupsAreTheArgumentsBetweenTheSeparators() {
        String[] args = {"--tenant", "public", "--next", "--name", "a", "--parallelism", "1", "--next", "--name", "b"};

        assertThat(LocalRunners.groups(args))
                .containsExactly(
                        List.of("--tenant", "public"),
                        List.of("--name", "a", "--parallelism", "1"),
                        List.of("--name", "b"));
    }

    @Test
    void oneGroupWithoutASeparatorIsLocalRunnersOwnArguments() {
        assertThat(LocalRunners.groups(new String[] {"--name", "a"})).containsExactly(List.of("--name", "a"));
    }

    @Test
    void anEmptyGroupIsRefusedWithWhereItIs() {
        assertThatThrownBy(() -> LocalRunners.groups(new String[] {"--name", "a", "--next", "--next", "--name", "b"}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("an empty group of LocalRunner arguments at 3 in [--name, a, --next, --next, --name, b]");
        assertThatThrownBy(() -> LocalRunners.groups(new String[] {"--name", "a", "--next"}))
                .hasMessageStartingWith("an empty group of LocalRunner arguments at 3 in");
        assertThatThrownBy(() -> LocalRunners.groups(new String[0]))
                .hasMessageStartingWith("an empty group of LocalRunner arguments at 0 in");
    }
}
