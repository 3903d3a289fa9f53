package dev.settle.runtime.driver;

/**
 * A batch handler's result that cannot be applied: it named a delivery not in the batch, or gave one delivery two
 * outcomes. Every delivery of the call fails with it (a handler's bug, not a poison message: the batch is not split).
 */
final class BatchResultRefusedException extends Exception {
    private static final long serialVersionUID = 1L;

    BatchResultRefusedException(String message) {
        super(message);
    }
}
