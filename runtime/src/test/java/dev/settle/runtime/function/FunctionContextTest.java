package dev.settle.runtime.function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.isolation.FunctionJarScan;
import dev.settle.runtime.publish.Outputs;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.functions.api.Context;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The Context Settle gives functions: what it serves, and that the rest fails loudly with advice. */
class FunctionContextTest {
    private final Outputs noOutputs = new Outputs() {
        @Override
        public <T> TypedMessageBuilder<T> newMessage(String topic, Schema<T> schema) {
            throw new AssertionError("nothing publishes here");
        }

        @Override
        public void close() {}
    };

    private final FunctionContext context = new FunctionContext(
            new FunctionContext.Setup(
                    "enrich",
                    List.of("persistent://acme/shop/orders"),
                    Optional.of("persistent://acme/shop/orders-enriched"),
                    "STRING",
                    Map.of("region", "eu-west-1"),
                    Map.of("apiKey", "API_KEY"),
                    Map.of("API_KEY", "k-123")::get,
                    LoggerFactory.getLogger("test.Function"),
                    (name, value) -> {},
                    noOutputs,
                    "1.2.3",
                    2,
                    3,
                    null),
            null,
            null);

    @Test
    void servesNamesConfigSecretsAndTopicsFromTheManifest() {
        assertThat(context.getFunctionName()).isEqualTo("enrich");
        assertThat(context.getTenant()).isEqualTo("acme");
        assertThat(context.getNamespace()).isEqualTo("acme/shop");
        assertThat(context.getInputTopics()).containsExactly("persistent://acme/shop/orders");
        assertThat(context.getOutputTopic()).isEqualTo("persistent://acme/shop/orders-enriched");
        assertThat(context.getUserConfigValue("region")).contains("eu-west-1");
        assertThat(context.getUserConfigValueOrDefault("missing", "x")).isEqualTo("x");
        assertThat(context.getUserConfigMap()).containsExactly(Map.entry("region", "eu-west-1"));
        assertThat(context.getSecret("apiKey")).isEqualTo("k-123");
        assertThat(context.getSecret("other")).isNull();
        assertThat(context.getInstanceId()).isEqualTo(2);
        assertThat(context.getNumInstances()).isEqualTo(3);
        assertThat(context.getFunctionVersion()).isEqualTo("1.2.3");
    }

    @Test
    void everyUnsupportedMethodThrowsNamingItselfAndWhatToUseInstead() throws Exception {
        for (Method method : Context.class.getMethods()) {
            if (Modifier.isStatic(method.getModifiers())) {
                continue;
            }
            String advice = FunctionJarScan.UNSUPPORTED.get(method.getName());
            if (advice == null) {
                continue;
            }
            Object[] arguments = new Object[method.getParameterCount()];
            for (int i = 0; i < arguments.length; i++) {
                Class<?> type = method.getParameterTypes()[i];
                if (type == long.class) {
                    arguments[i] = 1L;
                } else if (type == double.class) {
                    arguments[i] = 1.0;
                }
            }
            assertThatThrownBy(() -> {
                        try {
                            method.invoke(context, arguments);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    })
                    .as(method.toString())
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessage("Context." + method.getName() + " is not supported by Settle: " + advice);
        }
    }

    @Test
    void theCurrentRecordOutsideACallIsAnErrorThatSaysWhy() {
        assertThatThrownBy(context::getCurrentRecord)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("initialize");
    }
}
