package dev.settle.runtime.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Which {@code schema:} a handler's type can take, kind by kind. */
class SchemaKindTest {

    record Order(String id) {}

    @Test
    void stringFitsOnlyAStringHandler() {
        assertThat(SchemaKind.STRING.fits(String.class)).isTrue();
        assertThat(SchemaKind.STRING.fits(byte[].class)).isFalse();
        assertThat(SchemaKind.STRING.fits(Order.class)).isFalse();
        assertThat(SchemaKind.STRING.fits(Object.class)).isFalse();
    }

    @Test
    void bytesFitsOnlyAByteArrayHandler() {
        assertThat(SchemaKind.BYTES.fits(byte[].class)).isTrue();
        assertThat(SchemaKind.BYTES.fits(String.class)).isFalse();
        assertThat(SchemaKind.BYTES.fits(Byte[].class)).isFalse();
        assertThat(SchemaKind.BYTES.fits(Order.class)).isFalse();
    }

    @Test
    void jsonAndAvroFitAClassOfTheHandlersOwnButNotStringOrBytes() {
        for (SchemaKind kind : List.of(SchemaKind.JSON, SchemaKind.AVRO)) {
            assertThat(kind.fits(Order.class)).as(kind.manifestName()).isTrue();
            assertThat(kind.fits(Map.class)).as(kind.manifestName()).isTrue();
            assertThat(kind.fits(String.class)).as(kind.manifestName()).isFalse();
            assertThat(kind.fits(byte[].class)).as(kind.manifestName()).isFalse();
        }
    }

    @Test
    void theSchemaATypeGetsByDefaultAlwaysFitsIt() {
        for (Class<?> type : List.of(String.class, byte[].class, Order.class, Object.class)) {
            assertThat(SchemaKind.forMessageType(type).fits(type))
                    .as(type.getName())
                    .isTrue();
        }
    }

    @Test
    void everyKindIsDecidedForEveryTypeShape() {
        assertThat(SchemaKind.values()).hasSize(4);
        assertThat(SchemaKind.fitting(String.class)).containsExactly(SchemaKind.STRING);
        assertThat(SchemaKind.fitting(byte[].class)).containsExactly(SchemaKind.BYTES);
        assertThat(SchemaKind.fitting(Order.class)).containsExactly(SchemaKind.JSON, SchemaKind.AVRO);
    }
}
