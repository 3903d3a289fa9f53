/**
 * Live code (docs/live-code.md): a subscription's handler swapped for another while its consumer stays open.
 * {@link dev.settle.runtime.live.SwappableHandlerPort} is the driver's port that switches generations with
 * nothing lost; {@link dev.settle.runtime.live.LiveCode} checks an uploaded JAR completely before anything changes,
 * keeps the last generations in the data folder for rollback and restarts, and watches retired class loaders.
 */
package dev.settle.runtime.live;
