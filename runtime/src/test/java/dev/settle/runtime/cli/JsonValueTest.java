package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonValueTest {
    @Test
    void readsWhatTheAdminApiWrites() {
        Map<String, Object> map = AdminClient.asMap(
                JsonValue.parse(
                        " {\"generation\":3,\"sha256\":\"ab\\\"c\",\"problems\":[\"x\\ny\",\"\\u0041\"],\"ok\":true,\"n\":null} "));
        assertThat(map)
                .containsEntry("generation", 3.0)
                .containsEntry("sha256", "ab\"c")
                .containsEntry("problems", List.of("x\ny", "A"))
                .containsEntry("ok", true)
                .containsEntry("n", null)
                .hasSize(5);
    }

    @Test
    void textThatIsNotJsonIsRefused() {
        assertThatThrownBy(() -> JsonValue.parse("<html>")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> JsonValue.parse("{\"a\":1} x")).hasMessageContaining("text after the value");
    }
}
