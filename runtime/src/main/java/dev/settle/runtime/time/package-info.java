/**
 * The runtime's clock and its one timer ({@link dev.settle.runtime.time.Time}): real ({@code SystemTime}) or
 * moved by hand ({@code ManualTime}, for tests and the test kit). Depends on nothing else of the runtime.
 */
package dev.settle.runtime.time;
