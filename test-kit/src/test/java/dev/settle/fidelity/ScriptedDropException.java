package dev.settle.fidelity;

/** Thrown for the action {@code dropexc}: the scenarios' {@code onException} settles it as a drop. */
public final class ScriptedDropException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ScriptedDropException(String message) {
        super(message);
    }
}
