package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.runtime.manifest.ExceptionRule;
import dev.settle.sdk.Outcome;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code onException}: the first rule whose type the exception is an instance of decides; otherwise a failure. */
class ExceptionRulesPortTest {
    private final ExceptionRulesPort rules = (ExceptionRulesPort) ExceptionRulesPort.of(
            new PendingPortStub(),
            "orders",
            List.of(
                    new ExceptionRule(
                            "java.lang.IllegalArgumentException", ExceptionRule.Action.DROP, Optional.empty()),
                    new ExceptionRule(
                            "java.net.ConnectException",
                            ExceptionRule.Action.RETRY_AFTER,
                            Optional.of(Duration.ofSeconds(10))),
                    new ExceptionRule("java.io.IOException", ExceptionRule.Action.RETRY, Optional.empty())));

    @Test
    void aSubclassMatchesItsListedType() {
        assertThat(rules.map(new NumberFormatException("x"))).isSameAs(Outcome.drop());
    }

    @Test
    void theFirstMatchingRuleWinsOverALaterBroaderOne() {
        assertThat(rules.map(new ConnectException("down"))).isEqualTo(Outcome.retryAfter(Duration.ofSeconds(10)));
        assertThat(rules.map(new IOException("disk"))).isSameAs(Outcome.retry());
    }

    @Test
    void anUnlistedExceptionStaysAFailure() {
        assertThat(rules.map(new IllegalStateException("bug"))).isNull();
    }

    @Test
    void anOutputNotStoredOrADecodeFailureIsNeverMapped() {
        assertThat(rules.map(new OutputNotDurableException("x", new IllegalArgumentException())))
                .isNull();
        assertThat(rules.map(new PayloadDecodeException("x", null))).isNull();
        assertThat(rules.map(new RecordFailedException("x"))).isNull();
    }

    @Test
    void aVirtualMachineErrorIsNeverMappedEvenByARuleOnThrowable() {
        ExceptionRulesPort everything = (ExceptionRulesPort) ExceptionRulesPort.of(
                new PendingPortStub(),
                "orders",
                List.of(new ExceptionRule("java.lang.Throwable", ExceptionRule.Action.DROP, Optional.empty())));

        assertThat(everything.map(new InternalError("a function's context.fatal")))
                .isNull();
        assertThat(everything.map(new AssertionError("an Error that is not fatal")))
                .isSameAs(Outcome.drop());
    }

    @Test
    void noRulesMeansThePortItself() {
        PendingPortStub port = new PendingPortStub();
        assertThat(ExceptionRulesPort.of(port, "orders", List.of())).isSameAs(port);
    }

    private static final class PendingPortStub implements HandlerPort {
        @Override
        public org.apache.pulsar.client.api.Schema<?> schema() {
            return org.apache.pulsar.client.api.Schema.STRING;
        }

        @Override
        public java.util.concurrent.CompletionStage<Outcome> handle(
                UnitOfWork<org.apache.pulsar.client.api.Message<?>> work) {
            throw new UnsupportedOperationException();
        }
    }
}
