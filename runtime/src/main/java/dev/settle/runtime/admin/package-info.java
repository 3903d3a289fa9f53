/**
 * The admin API (docs/live-code.md): handler JARs uploaded, rolled back and shown over HTTP, on a port of its own,
 * behind a bearer token. Off unless the manifest has {@code admin:}. Uses the live package for everything it
 * changes; the JDK's HTTP server, so no dependency is added for it.
 */
package dev.settle.runtime.admin;
