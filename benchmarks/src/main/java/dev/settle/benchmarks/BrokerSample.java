package dev.settle.benchmarks;

/**
 * What the harness reads of the broker as a child's marker arrives: its CPU time ({@link BrokerCpu}) and the commands
 * counted so far ({@link BrokerCommands}). A run's figures are the difference of two samples.
 */
record BrokerSample(long cpuNanos, BrokerCommands.Counts commands) {
    /** For a child whose markers need no sample of the broker. */
    static final BrokerSample NONE = new BrokerSample(0, BrokerCommands.Counts.NONE);
}
