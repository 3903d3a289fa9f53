package dev.settle.runtime.live;

import dev.settle.runtime.time.Time;
import java.time.Duration;

/**
 * What every subscription's live code shares for the runtime's life, made once by {@link LiveCode}.
 *
 * @param grace how long a swap waits for the old generation's calls
 * @param metrics the swaps, refusals and active generations
 * @param loaders the watch over retired class loaders
 * @param clock the wall clock generations are dated by
 * @param instance this runtime, as records and reports name it
 */
record LiveParts(Duration grace, LiveMetrics metrics, RetiredLoaders loaders, Time clock, String instance) {}
