package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.isolation.ClassLoadingPolicy.Source;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ClassLoadingPolicyTest {

    @ParameterizedTest(name = "{0} comes from {1}")
    @CsvSource({
        // The SDK: the runtime calls the handler through these very classes.
        "dev.settle.sdk.Outcome, RUNTIME",
        "dev.settle.sdk.Handler, RUNTIME",
        "dev.settle.sdk.Outcome$RetryAfter, RUNTIME",
        "dev.settle.sdk.package-info, RUNTIME",
        // SLF4J's API: handlers log through the runtime's binding.
        "org.slf4j.Logger, RUNTIME",
        "org.slf4j.spi.SLF4JServiceProvider, RUNTIME",
        "org.slf4j.event.Level, RUNTIME",
        // Pulsar Functions: a function reaches the runtime's client through the Functions API and the client API
        // types its signatures expose, so a bundled copy must not shadow them.
        "org.apache.pulsar.functions.api.Function, RUNTIME",
        "org.apache.pulsar.functions.api.Context, RUNTIME",
        "org.apache.pulsar.functions.api.utils.FunctionRecord$FunctionRecordBuilder, RUNTIME",
        "org.apache.pulsar.client.api.Message, RUNTIME",
        "org.apache.pulsar.client.api.Schema, RUNTIME",
        "org.apache.pulsar.client.api.schema.GenericRecord, RUNTIME",
        "org.apache.pulsar.client.internal.DefaultImplementation, RUNTIME",
        "org.apache.pulsar.common.schema.KeyValue, RUNTIME",
        "org.apache.pulsar.functions.apix.Foo, HANDLER",
        "org.apache.pulsar.functions.instance.JavaInstance, HANDLER",
        // Whole package segments only.
        "dev.settle.sdkx.Foo, HANDLER",
        "dev.settle.sdk, HANDLER",
        "org.slf4j2.X, HANDLER",
        "org.slf4jx.Logger, HANDLER",
        "org.slf4, HANDLER",
        // The rest of the runtime is never shared: not its other packages, not its libraries.
        "dev.settle.runtime.isolation.HandlerLoader, HANDLER",
        "dev.settle.examples.orders.OrderHandler, HANDLER",
        "org.apache.pulsar.client.impl.ConsumerImpl, HANDLER",
        "org.apache.pulsar.client.admin.PulsarAdmin, HANDLER",
        "org.apache.pulsar.common.policies.data.TopicStats, HANDLER",
        "org.yaml.snakeyaml.Yaml, HANDLER",
        "io.prometheus.metrics.core.metrics.Counter, HANDLER",
        "ch.qos.logback.classic.Logger, HANDLER",
        "com.fasterxml.jackson.databind.ObjectMapper, HANDLER",
        "com.acme.orders.OrderHandler, HANDLER",
        // The JDK is the handler loader's parent: asked first there, never shadowed.
        "java.lang.String, HANDLER",
        "javax.net.ssl.SSLContext, HANDLER",
        "jdk.internal.misc.Unsafe, HANDLER",
    })
    void classesComeFromTheRuntimeOnlyForTheSdkSlf4jAndTheFunctionsApi(String className, Source expected) {
        assertThat(ClassLoadingPolicy.forClass(className)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0} comes from {1}")
    @CsvSource({
        "dev/settle/sdk/Outcome.class, RUNTIME",
        "org/slf4j/Logger.class, RUNTIME",
        "org/slf4j/impl/StaticLoggerBinder.class, RUNTIME",
        "org/apache/pulsar/functions/api/Context.class, RUNTIME",
        "org/apache/pulsar/client/api/Schema.class, RUNTIME",
        "org/apache/pulsar/client/impl/ConsumerImpl.class, HANDLER",
        "dev/settle/sdkx/Foo.class, HANDLER",
        "org/slf4j2/X.class, HANDLER",
        // The services file is the handler's own, though it is named after an SDK type.
        "META-INF/services/dev.settle.sdk.Handler, HANDLER",
        "META-INF/services/org.slf4j.spi.SLF4JServiceProvider, HANDLER",
        "logback.xml, HANDLER",
        "foo.properties, HANDLER",
        "org/yaml/snakeyaml/Yaml.class, HANDLER",
        "java/lang/String.class, HANDLER",
        // A resource is a path: a file at the root named like a package is the handler's.
        "org.slf4j.properties, HANDLER",
        "dev.settle.sdk.txt, HANDLER",
    })
    void resourcesFollowTheSameRuleWithSlashes(String resourceName, Source expected) {
        assertThat(ClassLoadingPolicy.forResource(resourceName)).isEqualTo(expected);
    }

    @Test
    void aClassAndItsClassFileAlwaysComeFromTheSameSide() {
        for (String className : new String[] {
            "dev.settle.sdk.Outcome",
            "org.slf4j.Logger",
            "org.apache.pulsar.functions.api.Record",
            "org.apache.pulsar.client.impl.ProducerImpl",
            "dev.settle.sdkx.A",
            "org.slf4j2.B",
            "com.acme.C",
            "java.lang.String"
        }) {
            assertThat(ClassLoadingPolicy.forResource(className.replace('.', '/') + ".class"))
                    .as(className)
                    .isEqualTo(ClassLoadingPolicy.forClass(className));
        }
    }
}
