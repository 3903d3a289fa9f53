package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.SubscriptionSpec;
import dev.settle.runtime.publish.Outputs;
import dev.settle.sdk.Publisher;
import java.util.List;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.junit.jupiter.api.Test;

class SubscriptionContextTest {
    private static final Outputs NOWHERE = new Outputs() {
        @Override
        public <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema) {
            throw new UnsupportedOperationException("not sent in this test");
        }

        @Override
        public void close() {}
    };

    @Test
    void aContextWithoutAHandlerLoaderGivesPublishersOfJdkTypes() {
        // An uploaded handler's context has no loader of its own (Settle.start); String and byte[] have none either.
        SubscriptionContext context = PortChain.context(
                SubscriptionSpec.builder("orders", List.of("orders")).build(), NOWHERE, null);

        Publisher<String> text = context.publisher("orders-out", String.class);
        Publisher<byte[]> bytes = context.publisher("orders-raw", byte[].class);

        assertThat(text.topic()).isEqualTo("persistent://public/default/orders-out");
        assertThat(bytes.topic()).isEqualTo("persistent://public/default/orders-raw");
    }
}
