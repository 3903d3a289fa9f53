/**
 * The command line: {@code settle run} and {@code settle validate} ({@link dev.settle.runtime.cli.Main}), with
 * their exit codes. Both go through the same preflight; {@code run} then starts a
 * {@link dev.settle.runtime.Settle} and owns the process's signals. Nothing else of the runtime depends on it.
 */
package dev.settle.runtime.cli;
