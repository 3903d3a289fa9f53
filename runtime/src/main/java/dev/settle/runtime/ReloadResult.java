package dev.settle.runtime;

/** What a manifest reload did ({@link Settle#reload}). */
public enum ReloadResult {
    /** Some subscriptions were started, stopped, swapped or restarted. */
    APPLIED,
    /**
     * Some subscriptions could not be changed as the new manifest says (their code or consumer did not open): each of
     * them runs on as it was, or, added, is retried with backoff and unready meanwhile; the others were applied. The
     * log names each with its cause; the next reload tries them again.
     */
    FAILED,
    /** The new manifest runs exactly what runs already. */
    UNCHANGED,
    /** Invalid, or it changes what needs a restart of the process: nothing running was touched. */
    REFUSED
}
