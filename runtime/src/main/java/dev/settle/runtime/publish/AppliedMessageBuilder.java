package dev.settle.runtime.publish;

import java.util.function.Consumer;
import org.apache.pulsar.client.api.TypedMessageBuilder;

/**
 * A message builder over a real one that exists already: each setting is applied to it at once, and only the send is
 * the subclass's own ({@link TrackedMessageBuilder}, {@link ResendGuardedMessageBuilder}).
 */
abstract class AppliedMessageBuilder<T> extends ForwardingMessageBuilder<T> {
    private static final long serialVersionUID = 1L;

    /** The real builder: every setting goes to it, and the subclass's send through it. */
    final transient TypedMessageBuilder<T> delegate;

    AppliedMessageBuilder(TypedMessageBuilder<T> delegate) {
        this.delegate = delegate;
    }

    @Override
    final TypedMessageBuilder<T> set(Consumer<TypedMessageBuilder<T>> setting) {
        setting.accept(delegate);
        return this;
    }
}
