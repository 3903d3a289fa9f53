package dev.settle.runtime.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class WrongTokensTest {
    private static final InetAddress PEER = address(1);
    private static final InetAddress OTHER = address(2);

    private final AtomicLong now = new AtomicLong(1_000);
    private final WrongTokens wrongTokens = new WrongTokens(now::get);

    @Test
    void tenWrongTokensAreComparedAtOnceThenOneASecond() {
        int compared = 0;
        // 200 guesses, one each 10 ms: the burst of ten at once, then one when the first second has refilled one.
        for (int guess = 0; guess < 200; guess++) {
            if (wrongTokens.secondsToWait(PEER) == 0) {
                compared++;
                wrongTokens.wrong(PEER);
            }
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(10));
        }
        assertThat(compared).isEqualTo(11);

        // An hour of guessing: one a second, 3600 in all, never more.
        int inAnHour = 0;
        for (int tick = 0; tick < 360_000; tick++) {
            if (wrongTokens.secondsToWait(PEER) == 0) {
                inAnHour++;
                wrongTokens.wrong(PEER);
            }
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(10));
        }
        assertThat(inAnHour).isBetween(3599, 3601);
    }

    @Test
    void whileGuessingIsHeldBackTheWaitIsSaidInWholeSeconds() {
        for (int guess = 0; guess < WrongTokens.BURST; guess++) {
            wrongTokens.wrong(PEER);
        }
        assertThat(wrongTokens.secondsToWait(PEER)).isEqualTo(1);
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(1001));
        assertThat(wrongTokens.secondsToWait(PEER)).isZero();
    }

    @Test
    void theBucketRefillsToTenAndNoMore() {
        wrongTokens.wrong(PEER);
        now.addAndGet(TimeUnit.HOURS.toNanos(1));
        int compared = 0;
        while (wrongTokens.secondsToWait(PEER) == 0) {
            compared++;
            wrongTokens.wrong(PEER);
        }
        assertThat(compared).isEqualTo(WrongTokens.BURST);
    }

    @Test
    void onePeersWrongTokensDoNotHoldBackAnother() {
        for (int guess = 0; guess < 100; guess++) {
            wrongTokens.wrong(OTHER);
        }

        assertThat(wrongTokens.secondsToWait(OTHER)).isPositive();
        assertThat(wrongTokens.secondsToWait(PEER)).isZero();
    }

    @Test
    void theOldestPeerIsForgottenPastTheLimitAndStartsAgainWithAFullBucket() throws Exception {
        for (int guess = 0; guess < WrongTokens.BURST; guess++) {
            wrongTokens.wrong(PEER);
        }
        for (int peer = 0; peer < WrongTokens.PEERS; peer++) {
            wrongTokens.wrong(InetAddress.getByAddress(new byte[] {10, 0, (byte) (peer >> 8), (byte) peer}));
        }

        assertThat(wrongTokens.secondsToWait(PEER)).isZero();
    }

    private static InetAddress address(int last) {
        try {
            return InetAddress.getByAddress(new byte[] {127, 0, 0, (byte) last});
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
