package dev.settle.runtime.driver;

/**
 * Completes a canary's delivery at exactly-once whose canary call failed after it had sent an output in the
 * delivery's transaction (docs/live-code.md, "Canary at exactly-once"): the transaction is aborted, so none of the
 * canary's outputs is read, and the message is negatively acknowledged at once, not counted as a failure: the canary's
 * failure neither brings it nearer to the dead letters nor reaches the outage breaker. Its next attempt goes to the
 * current generation.
 */
public final class MovedToCurrentGeneration extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MovedToCurrentGeneration(String why) {
        super(why, null, false, false);
    }
}
