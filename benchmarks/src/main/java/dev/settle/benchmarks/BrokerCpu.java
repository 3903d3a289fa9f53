package dev.settle.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;

/**
 * The embedded broker's CPU time, read in the harness's JVM where it runs: the process's CPU time minus that of the
 * harness's own threads. The broker's threads are told apart by their context class loader, the one
 * {@code EmbeddedPulsar} loads the broker in (threads inherit it from the thread that starts them), and the common
 * fork-join pool's workers are counted as the broker's; every other Java thread is the harness's (main, its publishing client, the readers of the children's output) and is taken off. What
 * the JVM itself does (garbage collection, the JIT compiler) is left in: the broker is what it works for, the harness
 * idles while a consumer drains.
 *
 * <p>Samples are differences: a harness thread's CPU counts from the first sample it is seen in, so one that ends
 * between two samples leaves only what it used before the first (the readers of finished children, a few ms).
 */
final class BrokerCpu {
    private static final String BROKER_LOADER = "pulsar-broker";
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /** The harness's threads' CPU time when last seen, by thread id. */
    private final Map<Long, Long> harnessThreads = new HashMap<>();

    private long harnessNanos;

    /** Whether the broker runs in this JVM at all (not when the integration test is given a broker by URL). */
    static boolean inThisJvm() {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(BrokerCpu::inBrokerLoader);
    }

    /** The broker's CPU time so far, in nanoseconds: comparable only with another sample of this object. */
    synchronized long nanos() {
        for (Thread thread : Thread.getAllStackTraces().keySet()) {
            if (isBrokers(thread)) {
                continue;
            }
            long cpu = THREADS.getThreadCpuTime(thread.getId());
            if (cpu < 0) {
                continue; // ended since it was listed
            }
            Long before = harnessThreads.put(thread.getId(), cpu);
            harnessNanos += cpu - (before == null ? cpu : before);
        }
        return OS.getProcessCpuTime() - harnessNanos;
    }

    private static boolean isBrokers(Thread thread) {
        // The common pool's workers always get the system class loader, whoever hands them work; only the broker
        // does (its CompletableFuture chains), the harness's client is idle while a consumer drains.
        return inBrokerLoader(thread) || thread.getName().startsWith("ForkJoinPool.commonPool-");
    }

    private static boolean inBrokerLoader(Thread thread) {
        ClassLoader loader = thread.getContextClassLoader();
        return loader != null && BROKER_LOADER.equals(loader.getName());
    }
}
