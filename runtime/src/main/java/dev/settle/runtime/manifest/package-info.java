/**
 * The manifest: YAML text to a validated, immutable model, or to every problem it has.
 *
 * <p>{@link dev.settle.runtime.manifest.ManifestLoader} composes the YAML safely (no tags, bounded aliases,
 * depth and size) and reads it key by key, so each {@link dev.settle.runtime.manifest.Problem} names the file,
 * line, column, key path and value. The model ({@link dev.settle.runtime.manifest.Manifest},
 * {@link dev.settle.runtime.manifest.SubscriptionSpec} and the records it groups) cannot hold a state the
 * validator refuses, and carries its own defaults. Depends on nothing else of the runtime, and on no Pulsar type.
 */
package dev.settle.runtime.manifest;
