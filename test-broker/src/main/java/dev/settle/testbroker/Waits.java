package dev.settle.testbroker;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Predicate;

/**
 * Waiting for a condition with a deadline, the way every integration test should: ask again and again until it holds
 * or the deadline passes, and then fail saying what was awaited, for how long, and what was last seen. The pause
 * between two looks is the only sleep, and it lives here.
 */
public final class Waits {
    /**
     * Between two looks at a condition: at first short, so that what holds soon is seen soon, and each pause half as
     * long again as the last, up to {@link #LONGEST_POLL_MILLIS}, so that a wait of seconds looks a few times a second
     * rather than twenty. The looks are not free: most ask the broker's admin API for a topic's stats, 2.6-2.8 ms of
     * the broker's CPU each, and its web threads, which answer them, used 8% of the runtime integration tests' JVM's
     * CPU (22 of 269-285 s, issue 43).
     */
    private static final long FIRST_POLL_MILLIS = 10;

    private static final long LONGEST_POLL_MILLIS = 200;

    /** Between two looks at what must keep holding ({@link #during}): as often for the whole period. */
    private static final long WATCH_MILLIS = 50;

    private Waits() {}

    /**
     * Looks at {@code probe} until {@code done} accepts what it answers, and returns that answer; fails after
     * {@code timeout} with {@code what} and the last answer. A probe that throws counts as not done yet (a port not
     * listening, a topic not there yet); its exception is what was last seen.
     */
    public static <T> T until(String what, Duration timeout, Callable<T> probe, Predicate<? super T> done) {
        long started = System.nanoTime();
        long deadline = started + timeout.toNanos();
        Object lastSeen = "nothing yet";
        long pollMillis = FIRST_POLL_MILLIS;
        while (true) {
            try {
                T answer = probe.call();
                if (done.test(answer)) {
                    return answer;
                }
                lastSeen = answer;
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what, interrupted);
            } catch (Exception notYet) {
                lastSeen = notYet;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(String.format(
                        "waited %.1f s for %s (the bound: %s); last seen:%n%s",
                        (System.nanoTime() - started) / 1e9, what, timeout, lastSeen));
            }
            pause(pollMillis);
            pollMillis = Math.min(LONGEST_POLL_MILLIS, pollMillis * 3 / 2);
        }
    }

    /**
     * Waits until {@code condition} holds; fails after {@code timeout} with {@code what} and {@code lastSeen}'s answer
     * then. {@code lastSeen} is asked once, when the wait fails: a report of where things stand can be dear, and
     * asked at every look {@code StallReport} opened an admin client of its own, read the topic's stats and took
     * every thread's stack twenty times a second for as long as the wait lasted (issue 43).
     */
    public static void until(String what, Duration timeout, Callable<Boolean> condition, Callable<?> lastSeen) {
        until(what, timeout, () -> condition.call() ? Look.DONE : new Look(false, lastSeen), Look::done);
    }

    /**
     * Looks at {@code invariant} for the whole of {@code period} and fails at once when it stops holding, with
     * {@code what}, when, and {@code lastSeen}'s answer then: for what must keep holding (a process alive, a runtime
     * unready, nothing handed over) rather than a sleep followed by one look.
     */
    public static void during(String what, Duration period, Callable<Boolean> invariant, Callable<?> lastSeen) {
        long started = System.nanoTime();
        long end = started + period.toNanos();
        while (true) {
            boolean holds;
            try {
                holds = invariant.call();
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while watching " + what, interrupted);
            } catch (Exception unreadable) {
                throw new AssertionError("could not look at " + what, unreadable);
            }
            if (!holds) {
                throw new AssertionError(String.format(
                        "%s stopped holding after %.1f s of %s; last seen:%n%s",
                        what, (System.nanoTime() - started) / 1e9, period, describe(lastSeen)));
            }
            if (System.nanoTime() - end > 0) {
                return;
            }
            pause(WATCH_MILLIS);
        }
    }

    /**
     * A deliberate pause, not a wait for a condition: a pace (sends so many a second), a measuring window, a time the
     * runtime must be left alone for. {@code why} says which, so that a reader never has to guess whether a condition
     * hides behind it; it is not printed. Interruptible, as a sleep: a pacing thread is stopped so.
     */
    public static void pause(Duration length, String why) throws InterruptedException {
        if (why == null || why.isBlank()) {
            throw new IllegalArgumentException("a pause says why it pauses (a pace, a window...), not what it awaits");
        }
        // The deliberate pauses of the tests: the one sleep they need beside the pause between two looks below.
        Thread.sleep(length.toMillis());
    }

    /** One look at a condition, and how to tell what is seen when it did not hold: printed only when the wait fails. */
    private record Look(boolean done, Callable<?> seen) {
        static final Look DONE = new Look(true, () -> null);

        @Override
        public String toString() {
            return String.valueOf(describe(seen));
        }
    }

    private static Object describe(Callable<?> lastSeen) {
        try {
            return lastSeen.call();
        } catch (Exception unreadable) {
            return unreadable;
        }
    }

    private static void pause(long millis) {
        try {
            // The pause between two looks at a condition: the one sleep a wait needs, here rather than in each test.
            Thread.sleep(millis);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting", interrupted);
        }
    }
}
