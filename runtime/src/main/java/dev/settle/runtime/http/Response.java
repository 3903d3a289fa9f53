package dev.settle.runtime.http;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * A whole answer: status, content type, extra headers and the body, written in one go after the handler returns
 * (answers here are small; a body is never streamed). Every answer closes its connection.
 */
public record Response(int status, String contentType, Map<String, String> headers, byte[] body) {

    public Response {
        headers = Map.copyOf(headers);
    }

    /** A plain-text answer in UTF-8. */
    public static Response text(int status, String body) {
        return new Response(status, "text/plain; charset=utf-8", Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    /** This answer with one more header. */
    public Response with(String header, String value) {
        Map<String, String> more = new java.util.LinkedHashMap<>(headers);
        more.put(header, value);
        return new Response(status, contentType, more, body);
    }
}
