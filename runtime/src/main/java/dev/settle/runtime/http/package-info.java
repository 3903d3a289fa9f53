/**
 * A small HTTP/1.1 server for the runtime's two ports (probes and metrics; the admin API) that slow or silent
 * clients cannot starve. One selector thread accepts connections and gathers each request's head without blocking,
 * under a deadline and a size cap; only a complete head reaches the small worker pool, whose reads and writes have
 * deadlines of their own, and the probe paths have a pool of their own. A body left unread is read away by the
 * selector thread after the answer, never by a worker. One request per connection. Refusals are counted and logged
 * by {@link dev.settle.runtime.http.Refusals}. Not the JDK's {@code com.sun.net.httpserver}: it reads a
 * request's head on its pool's threads with no deadline but the JVM-wide {@code sun.net.httpserver.maxReqTime}, so
 * two idle sockets held its two threads (issue 32). Depends on the JDK and SLF4J alone.
 */
package dev.settle.runtime.http;
