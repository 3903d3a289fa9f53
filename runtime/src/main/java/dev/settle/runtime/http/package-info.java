/**
 * The HTTP server of the runtime's two ports (probes and metrics; the admin API), on Jetty 12 (issue 40), set up so
 * that slow or silent clients cannot starve it. Jetty's own small thread pool per port accepts connections, reads
 * heads and bodies without blocking and writes answers; only a complete head, within a deadline and a size cap,
 * reaches the port's small worker pool, and the probe paths have a pool of their own. A body left unread is not
 * waited for. One request per connection. Refusals are counted and logged by
 * {@link dev.settle.runtime.http.Refusals}. Handlers see this package's {@link dev.settle.runtime.http.Request} and
 * {@link dev.settle.runtime.http.Response} only, never Jetty's types, and Jetty is loaded only when a port is served
 * ({@code settle run}), never by the other commands. Not the JDK's {@code com.sun.net.httpserver}: it reads a
 * request's head on its pool's threads with no deadline but the JVM-wide {@code sun.net.httpserver.maxReqTime}, so
 * two idle sockets held its two threads (issue 32).
 */
package dev.settle.runtime.http;
