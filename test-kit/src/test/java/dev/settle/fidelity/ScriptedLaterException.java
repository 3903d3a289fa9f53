package dev.settle.fidelity;

/** Thrown for the action {@code laterexc}: the scenarios' {@code onException} settles it as a retryAfter. */
public final class ScriptedLaterException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ScriptedLaterException(String message) {
        super(message);
    }
}
