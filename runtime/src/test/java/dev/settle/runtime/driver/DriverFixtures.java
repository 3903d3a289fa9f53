package dev.settle.runtime.driver;

import dev.settle.testbroker.PulsarBroker;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives a test method a {@link DriverFixture} on the shared real broker, and closes it (its drivers, timer and
 * clients) when the method ends.
 */
final class DriverFixtures implements ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(DriverFixtures.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == DriverFixture.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        try {
            DriverFixture fixture = new DriverFixture(PulsarBroker.endpoints(context));
            // The method's store closes AutoCloseable values when the method is done.
            context.getStore(NAMESPACE).put(DriverFixture.class, fixture);
            return fixture;
        } catch (Exception e) {
            throw new IllegalStateException("cannot connect to the test broker", e);
        }
    }
}
