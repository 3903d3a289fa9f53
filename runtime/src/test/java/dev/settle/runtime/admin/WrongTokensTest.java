package dev.settle.runtime.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class WrongTokensTest {
    private final AtomicLong now = new AtomicLong(1_000);
    private final WrongTokens wrongTokens = new WrongTokens(now::get);

    @Test
    void tenWrongTokensAreComparedAtOnceThenOneASecond() {
        int compared = 0;
        // 200 guesses, one each 10 ms: the burst of ten at once, then one when the first second has refilled one.
        for (int guess = 0; guess < 200; guess++) {
            if (wrongTokens.secondsToWait() == 0) {
                compared++;
                wrongTokens.wrong();
            }
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(10));
        }
        assertThat(compared).isEqualTo(11);

        // An hour of guessing: one a second, 3600 in all, never more.
        int inAnHour = 0;
        for (int tick = 0; tick < 360_000; tick++) {
            if (wrongTokens.secondsToWait() == 0) {
                inAnHour++;
                wrongTokens.wrong();
            }
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(10));
        }
        assertThat(inAnHour).isBetween(3599, 3601);
    }

    @Test
    void whileGuessingIsHeldBackTheWaitIsSaidInWholeSeconds() {
        for (int guess = 0; guess < WrongTokens.BURST; guess++) {
            wrongTokens.wrong();
        }
        assertThat(wrongTokens.secondsToWait()).isEqualTo(1);
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(1001));
        assertThat(wrongTokens.secondsToWait()).isZero();
    }

    @Test
    void theBucketRefillsToTenAndNoMore() {
        now.addAndGet(TimeUnit.HOURS.toNanos(1));
        int compared = 0;
        while (wrongTokens.secondsToWait() == 0) {
            compared++;
            wrongTokens.wrong();
        }
        assertThat(compared).isEqualTo(WrongTokens.BURST);
    }
}
