package dev.settle.runtime.http;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * Reads and drops what a handler left of a request's body, then lets its answer go. Jetty resets a connection
 * closed with body bytes unread, and a client still sending them (an upload refused on its {@code Content-Length}
 * alone, or for its token) then sees a broken pipe instead of the answer. The bytes are read as they arrive, on
 * Jetty's threads (no worker waits for them), until the body ends, none has come for {@link #QUIET}, or
 * {@link Limits#unreadBodyLongest()} has passed since the answer was ready; what comes after that is Jetty's to drop.
 */
final class UnreadBody implements Runnable {
    /** A client that sends nothing for this long is not sending its body: it waits for the answer. */
    static final Duration QUIET = Duration.ofSeconds(1);

    private final Request request;
    private final Scheduler scheduler;
    private final Runnable answer;
    private final long giveUpAt;

    // Guarded by this: run() is called by the worker first, then by Jetty's threads (on demand) and the timer.
    private boolean answered;
    private Scheduler.Task quiet;

    private UnreadBody(Request request, Scheduler scheduler, Duration longest, Runnable answer) {
        this.request = request;
        this.scheduler = scheduler;
        this.answer = answer;
        this.giveUpAt = System.nanoTime() + longest.toNanos();
    }

    /**
     * Reads {@code request}'s body away for at most {@code longest}, then runs {@code answer} (once, on whichever
     * thread saw the end).
     */
    static void dropThen(Request request, Scheduler scheduler, Duration longest, Runnable answer) {
        new UnreadBody(request, scheduler, longest, answer).run();
    }

    @Override
    public void run() {
        if (readAway()) {
            answer.run();
        }
    }

    /** True once, when the answer should go: the body ended, or the time to wait for it did. */
    private synchronized boolean readAway() {
        if (answered) {
            return false;
        }
        if (quiet != null) {
            quiet.cancel();
        }
        while (System.nanoTime() < giveUpAt) {
            Content.Chunk chunk = request.read();
            if (chunk == null) {
                long left = Math.min(QUIET.toNanos(), giveUpAt - System.nanoTime());
                quiet = scheduler.schedule(this::quietTooLong, Math.max(left, 0), TimeUnit.NANOSECONDS);
                request.demand(this);
                return false;
            }
            boolean end = chunk.isLast() || Content.Chunk.isFailure(chunk);
            chunk.release();
            if (end) {
                break;
            }
        }
        return claim();
    }

    private void quietTooLong() {
        if (claim()) {
            answer.run();
        }
    }

    /** True for the one caller that lets the answer go. */
    private synchronized boolean claim() {
        boolean first = !answered;
        answered = true;
        return first;
    }
}
