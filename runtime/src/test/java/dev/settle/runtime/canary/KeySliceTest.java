package dev.settle.runtime.canary;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.stream.IntStream;
import org.apache.pulsar.client.impl.MessageIdImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KeySliceTest {

    @ParameterizedTest
    @CsvSource({
        "order-0, 17872",
        "order-1, 22049",
        "order-42, 41358",
        "customer-7, 53910",
        "k, 42449",
        "'', 1",
        "ключ, 8258",
        "key-1000, 48189"
    })
    void theHashIsTheBrokersKeySharedHash(String key, int broker) {
        // Golden values printed by Pulsar 4.2.4's own broker class: new HashRangeAutoSplitStickyKeyConsumerSelector()
        // .makeStickyKeyHash(key.getBytes(UTF_8)) (the broker is not on this module's class path). The empty key
        // hashes to 0, which the broker makes 1 (STICKY_KEY_HASH_NOT_SET).
        assertThat(KeySlice.hashOf(key.getBytes(StandardCharsets.UTF_8))).isEqualTo(broker);
    }

    @Test
    void aSliceHoldsItsShareOfKeysAndALargerSliceHoldsEverySmallerOnesKeys() {
        KeySlice five = KeySlice.of(5);
        KeySlice twentyFive = KeySlice.of(25);
        long inFive = 0;
        long inTwentyFive = 0;
        for (int i = 0; i < 20_000; i++) {
            var message = Messages.keyed("customer-" + i);
            boolean small = five.contains(message);
            boolean large = twentyFive.contains(message);
            assertThat(!small || large)
                    .as("customer-" + i + " in 5% but not in 25%")
                    .isTrue();
            inFive += small ? 1 : 0;
            inTwentyFive += large ? 1 : 0;
        }
        assertThat(inFive / 20_000.0).isBetween(0.04, 0.06);
        assertThat(inTwentyFive / 20_000.0).isBetween(0.23, 0.27);
    }

    @Test
    void theSameKeyIsAlwaysOnTheSameSide() {
        KeySlice slice = KeySlice.of(50);
        IntStream.range(0, 1_000)
                .forEach(i -> assertThat(slice.contains(Messages.keyed("k" + i)))
                        .isEqualTo(KeySlice.of(50).contains(Messages.keyed("k" + i))));
    }

    @Test
    void noneAndAllAreTheEnds() {
        IntStream.range(0, 1_000).forEach(i -> {
            assertThat(KeySlice.of(0).contains(Messages.keyed("k" + i))).isFalse();
            assertThat(KeySlice.of(100).contains(Messages.keyed("k" + i))).isTrue();
        });
    }

    @Test
    void aMessageWithoutAKeyIsPlacedByItsIdTheSameOnEveryAttempt() {
        KeySlice slice = KeySlice.of(50);
        long in = IntStream.range(0, 2_000)
                .filter(entry -> {
                    boolean first = slice.contains(Messages.message(null, new MessageIdImpl(7, entry, -1)));
                    boolean again = slice.contains(Messages.message(null, new MessageIdImpl(7, entry, -1)));
                    assertThat(again).isEqualTo(first);
                    return first;
                })
                .count();
        assertThat(in / 2_000.0).isBetween(0.4, 0.6);
    }

    @Test
    void aSliceOutsideZeroToHundredIsRefused() {
        assertThatThrownBy(() -> KeySlice.of(101)).hasMessageContaining("0 to 100 percent, was 101");
        assertThatThrownBy(() -> KeySlice.of(-1)).hasMessageContaining("was -1");
    }
}
