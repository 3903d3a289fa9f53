package dev.settle.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class HeapTest {
    @Test
    void readsEachCollectionsUptimeAndHeapAfterFromAGcLog() {
        List<double[]> collections = Heap.afterGc(List.of(
                "[0.012s][info][gc] Using G1",
                "[4.250s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 25M->6M(512M) 4.311ms",
                "[61.500s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 131M->9M(512M) 2.001ms",
                "[62.000s][info][gc] GC(2) Pause Full (System.gc()) 40M->8M(512M) 20.5ms"));

        assertThat(collections).extracting(c -> c[0]).containsExactly(4250.0, 61500.0, 62000.0);
        assertThat(collections).extracting(c -> c[1]).containsExactly(6.0, 9.0, 8.0);
        assertThat(Heap.leastMiB(collections, 60_000, 70_000)).isEqualTo(8.0);
        assertThat(Heap.leastMiB(collections, 0, 1_000)).isNaN();
    }
}
