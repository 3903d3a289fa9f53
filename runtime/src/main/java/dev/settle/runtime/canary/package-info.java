/**
 * Canary generations (docs/live-code.md, "Canary ramps"): which generation a message goes to while a ramp runs,
 * chosen by its key's place in Pulsar's own key-hash range ({@link dev.settle.runtime.canary.KeySlice},
 * {@link dev.settle.runtime.canary.GenerationRouter}), each generation's outcomes counted side by side
 * ({@link dev.settle.runtime.canary.Outcomes}), and the rule that judges the canary against the current one
 * ({@link dev.settle.runtime.canary.Judge}). The ramp itself, as data in the fleet record, is the live package's.
 */
package dev.settle.runtime.canary;
