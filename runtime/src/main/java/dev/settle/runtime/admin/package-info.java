/**
 * The admin API (docs/live-code.md): handler JARs uploaded, rolled back and shown over HTTP, on a port of its own,
 * behind a bearer token. Off unless the manifest has {@code admin:}. Uses the live package for everything it
 * changes, and the runtime's own {@code http} server, which slow clients cannot starve (docs/security.md).
 */
package dev.settle.runtime.admin;
