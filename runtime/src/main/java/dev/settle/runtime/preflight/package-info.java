/**
 * Asks the broker, before a subscription starts, whether each promise its manifest makes can hold there: the
 * transaction coordinator, batch-index acknowledgement, deduplication, package management, the role's permissions,
 * output schemas, the subscription itself (docs/preflight.md). Reads only: admin GETs, a schema compatibility
 * question, and producers opened and closed without a send; it writes nothing to a user's topic and creates no
 * subscription.
 */
package dev.settle.runtime.preflight;
