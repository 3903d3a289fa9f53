package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.SubscriptionSpec;
import java.util.List;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.junit.jupiter.api.Test;

/** The broker's refusal, as the client words it (seen in MessageTypesIT), turned into what an operator can act on. */
class SchemaConflictExceptionTest {
    private static final String CLIENT_MESSAGE = "{\"errorMsg\":\"Incompatible schema: exists schema type STRING, new"
            + " schema type JSON\",\"reqId\":602893795557605017, \"remote\":\"127.0.0.1/127.0.0.1:34751\","
            + " \"local\":\"/127.0.0.1:57184\"}";

    @Test
    void theConflictNamesTheSubscriptionItsTopicsBothSchemasAndTheFixes() {
        SubscriptionSpec spec = SubscriptionSpec.builder(
                        "orders", List.of("persistent://public/default/a", "persistent://public/default/b"))
                .build();
        PulsarClientException.IncompatibleSchemaException refused =
                new PulsarClientException.IncompatibleSchemaException(CLIENT_MESSAGE);

        SchemaConflictException conflict = SchemaConflictException.of(spec, Schema.JSON(Order.class), refused);

        assertThat(conflict)
                .isInstanceOf(PulsarClientException.IncompatibleSchemaException.class)
                .hasCause(refused);
        assertThat(conflict.getMessage())
                .isEqualTo("schema conflict: subscription 'orders' on"
                        + " persistent://public/default/a,persistent://public/default/b reads messages as JSON, and the broker"
                        + " refused it: 'Incompatible schema: exists schema type STRING, new schema type JSON'. Publish to the"
                        + " topic with a schema that matches, change 'schema:' on the subscription (left out, a String handler"
                        + " registers no schema and reads any topic as UTF-8), or take byte[] in the handler to read payloads"
                        + " as published");
    }

    @Test
    void aMessageNotWrappedInTheClientsJsonIsKeptWhole() {
        assertThat(SchemaConflictException.brokerMessage(
                        new PulsarClientException.IncompatibleSchemaException(" some \"other\" wording ")))
                .isEqualTo("some \"other\" wording");
        assertThat(SchemaConflictException.brokerMessage(new PulsarClientException.IncompatibleSchemaException(
                        "{\"errorMsg\":\"a \\\"quoted\\\" type\",\"reqId\":1}")))
                .isEqualTo("a \"quoted\" type");
    }

    record Order(String id, int quantity) {}
}
