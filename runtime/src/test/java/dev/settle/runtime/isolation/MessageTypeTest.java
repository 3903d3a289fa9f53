package dev.settle.runtime.isolation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The message type is the handler's type argument, however the handler class reaches {@code Handler<T>}. */
class MessageTypeTest {

    @TempDir
    static Path dir;

    static Path jar;

    private final HandlerLoader loader = new HandlerLoader();

    @BeforeAll
    static void buildHandlerJar() {
        String handle = "public Outcome handle(Delivery<%s> d) { return Outcome.ack(); }";
        jar = TestJar.at(dir.resolve("types.jar"))
                .source(
                        "com.acme.types.Order",
                        "package com.acme.types; public record Order(String id, int quantity) {}")
                .source(
                        "com.acme.types.Strings",
                        handler("public class Strings implements Handler<String>", handle.formatted("String")))
                .source(
                        "com.acme.types.Bytes",
                        handler("public class Bytes implements Handler<byte[]>", handle.formatted("byte[]")))
                .source(
                        "com.acme.types.Orders",
                        handler("public class Orders implements Handler<Order>", handle.formatted("Order")))
                .source(
                        "com.acme.types.Maps",
                        handler(
                                "public class Maps implements Handler<java.util.Map<String, Object>>",
                                handle.formatted("java.util.Map<String, Object>")))
                // An abstract base class that leaves T open, and a subclass that fixes it.
                .source(
                        "com.acme.types.JsonHandler",
                        handler("public abstract class JsonHandler<T> implements Handler<T>", ""))
                .source(
                        "com.acme.types.Shipments",
                        handler("public class Shipments extends JsonHandler<Order>", handle.formatted("Order")))
                // T travels through two levels, changing position.
                .source("com.acme.types.Base", handler("public abstract class Base<A, B> implements Handler<B>", ""))
                .source(
                        "com.acme.types.Middle",
                        handler("public abstract class Middle<X> extends Base<Integer, X>", ""))
                .source(
                        "com.acme.types.Leaf",
                        handler("public class Leaf extends Middle<String>", handle.formatted("String")))
                // An interface fixes T.
                .source(
                        "com.acme.types.OrderEvents",
                        handler("public interface OrderEvents extends Handler<Order>", ""))
                .source(
                        "com.acme.types.Events",
                        handler("public class Events implements OrderEvents", handle.formatted("Order")))
                .source(
                        "com.acme.types.Raw",
                        handler(
                                "@SuppressWarnings(\"rawtypes\") public class Raw implements Handler",
                                "public Outcome handle(Delivery d) { return Outcome.ack(); }"))
                .source(
                        "com.acme.types.RawChild",
                        handler(
                                "@SuppressWarnings(\"rawtypes\") public class RawChild extends JsonHandler",
                                "public Outcome handle(Delivery d) { return Outcome.ack(); }"))
                .source(
                        "com.acme.types.Open",
                        handler("public class Open<T> implements Handler<T>", handle.formatted("T")))
                .services(
                        "com.acme.types.Strings",
                        "com.acme.types.Bytes",
                        "com.acme.types.Orders",
                        "com.acme.types.Maps",
                        "com.acme.types.Shipments",
                        "com.acme.types.Leaf",
                        "com.acme.types.Events",
                        "com.acme.types.Raw",
                        "com.acme.types.RawChild",
                        "com.acme.types.Open")
                .build();
    }

    private static String handler(String declaration, String body) {
        return "package com.acme.types;\nimport dev.settle.sdk.*;\n" + declaration + " {\n" + body + "\n}\n";
    }

    @AfterEach
    void closeLoader() {
        loader.close();
    }

    @Test
    void aStringHandlerTakesStrings() throws Exception {
        assertThat(messageType("com.acme.types.Strings")).isSameAs(String.class);
    }

    @Test
    void aByteArrayHandlerTakesBytes() throws Exception {
        assertThat(messageType("com.acme.types.Bytes")).isSameAs(byte[].class);
    }

    @Test
    void aRecordHandlerTakesTheRecordLoadedFromItsOwnJar() throws Exception {
        LoadedHandler loaded = loader.load(jar, Optional.of("com.acme.types.Orders"));

        assertThat(loaded.messageType().getName()).isEqualTo("com.acme.types.Order");
        assertThat(loaded.messageType().isRecord()).isTrue();
        assertThat(loaded.messageType().getClassLoader()).isSameAs(loaded.classLoader());
    }

    @Test
    void aParameterizedTypeArgumentResolvesToItsRawClass() throws Exception {
        assertThat(messageType("com.acme.types.Maps")).isSameAs(Map.class);
    }

    @Test
    void anAbstractBaseClassLeavingTOpenIsFixedByItsSubclass() throws Exception {
        assertThat(messageType("com.acme.types.Shipments").getName()).isEqualTo("com.acme.types.Order");
    }

    @Test
    void theTypeArgumentIsFollowedThroughSeveralGenericSuperclasses() throws Exception {
        assertThat(messageType("com.acme.types.Leaf")).isSameAs(String.class);
    }

    @Test
    void anInterfaceExtendingHandlerMayFixTheType() throws Exception {
        assertThat(messageType("com.acme.types.Events").getName()).isEqualTo("com.acme.types.Order");
    }

    @Test
    void aRawHandlerIsRefused() {
        Path location = jar.toAbsolutePath().normalize();

        assertThatThrownBy(() -> loader.load(jar, Optional.of("com.acme.types.Raw")))
                .isInstanceOf(HandlerLoadException.class)
                .hasMessage(location + ": handler com.acme.types.Raw does not say which message type it takes"
                        + " (found the raw type dev.settle.sdk.Handler); declare it, e.g. implements Handler<String>");
    }

    @Test
    void aHandlerExtendingARawBaseClassIsRefused() {
        Path location = jar.toAbsolutePath().normalize();

        assertThatThrownBy(() -> loader.load(jar, Optional.of("com.acme.types.RawChild")))
                .isInstanceOf(HandlerLoadException.class)
                .hasMessage(location + ": handler com.acme.types.RawChild does not say which message type it takes"
                        + " (found the raw type com.acme.types.JsonHandler); declare it, e.g. implements"
                        + " Handler<String>");
    }

    @Test
    void aHandlerLeavingTAsATypeVariableIsRefused() {
        Path location = jar.toAbsolutePath().normalize();

        assertThatThrownBy(() -> loader.load(jar, Optional.of("com.acme.types.Open")))
                .isInstanceOf(HandlerLoadException.class)
                .hasMessage(location + ": handler com.acme.types.Open does not say which message type it takes"
                        + " (found the type variable T); declare it, e.g. implements Handler<String>");
    }

    private Class<?> messageType(String className) throws HandlerLoadException {
        return loader.load(jar, Optional.of(className)).messageType();
    }
}
