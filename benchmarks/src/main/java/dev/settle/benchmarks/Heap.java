package dev.settle.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

/** The live heap: used bytes right after full collections. */
final class Heap {
    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    private Heap() {}

    static long usedAfterGc() throws InterruptedException {
        // Several rounds: one collection can leave objects that only the next one frees (finalizable, soft).
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return MEMORY.getHeapMemoryUsage().getUsed();
    }
}
