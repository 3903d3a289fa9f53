package dev.settle.runtime.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void valuesAreWrittenInOrderAndStringsEscaped() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("generation", 3);
        body.put("swapMillis", 0.25);
        body.put("problems", List.of("a \"quoted\" name", "line\nbreak\u0001"));
        body.put("ok", true);
        body.put("none", null);
        assertThat(Json.write(body))
                .isEqualTo("{\"generation\":3,\"swapMillis\":0.25,\"problems\":[\"a \\\"quoted\\\" name\","
                        + "\"line\\nbreak\\u0001\"],\"ok\":true,\"none\":null}");
    }
}
