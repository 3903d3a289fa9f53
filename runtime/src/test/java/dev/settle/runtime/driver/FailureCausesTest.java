package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.sdk.DependencyUnavailableException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.apache.pulsar.client.api.PulsarClientException;
import org.junit.jupiter.api.Test;

class FailureCausesTest {
    private final FailureCauses causes =
            new FailureCauses(List.of("dev.settle.runtime.driver.FailureCausesTest$WarehouseDown"));

    /** A handler's own exception type, named in the subscription's breaker settings. */
    static class WarehouseDown extends RuntimeException {
        private static final long serialVersionUID = 1L;
    }

    static final class WarehouseOnFire extends WarehouseDown {
        private static final long serialVersionUID = 1L;
    }

    @Test
    void ioTimeoutsTheSdkSignalAndNamedClassesAreADependencysFailure() {
        assertThat(causes.isDependency(new ConnectException("refused"))).isTrue();
        assertThat(causes.isDependency(new SocketTimeoutException())).isTrue();
        assertThat(causes.isDependency(new IOException("disk"))).isTrue();
        assertThat(causes.isDependency(new TimeoutException())).isTrue();
        assertThat(causes.isDependency(new DependencyUnavailableException("db")))
                .isTrue();
        assertThat(causes.isDependency(new WarehouseDown())).isTrue();
        assertThat(causes.isDependency(new WarehouseOnFire()))
                .as("a subclass of a named class")
                .isTrue();
    }

    @Test
    void theCauseChainIsWalked() {
        assertThat(causes.isDependency(new UncheckedIOException(new ConnectException("refused"))))
                .isTrue();
        assertThat(causes.isDependency(new CompletionException(new RuntimeException(new TimeoutException()))))
                .isTrue();
        assertThat(causes.isDependency(new Failure(
                        Failure.Stage.OUTPUT,
                        new OutputNotDurableException(
                                "not stored", new PulsarClientException.TimeoutException("send timed out")))))
                .as("a Pulsar exception from an output send")
                .isTrue();
    }

    @Test
    void anAcknowledgementRefusedAsAConflictIsTheBrokersAnswerNotAnOutage() {
        assertThat(causes.isDependency(new Failure(
                        Failure.Stage.TRANSACTION,
                        new TransactionFailedException(
                                "acknowledging 9 messages in their transaction failed",
                                new PulsarClientException.TransactionConflictException("already acked before")))))
                .isFalse();
        assertThat(causes.isDependency(new Failure(
                        Failure.Stage.TRANSACTION,
                        new TransactionFailedException(
                                "committing failed", new ConnectException("coordinator unreachable")))))
                .as("any other transaction failure with an I/O cause still is one")
                .isTrue();
    }

    @Test
    void anyOtherExceptionNeverOpensTheBreaker() {
        assertThat(causes.isDependency(new IllegalStateException("bug"))).isFalse();
        assertThat(causes.isDependency(new NullPointerException())).isFalse();
        assertThat(causes.isDependency(new RuntimeException(new IllegalArgumentException())))
                .isFalse();
        assertThat(new FailureCauses(List.of()).isDependency(new WarehouseDown()))
                .as("not named")
                .isFalse();
    }

    @Test
    void aPayloadThatCannotBeDecodedIsTheMessagesFaultWhateverTheDecoderThrew() {
        assertThat(causes.isDependency(new Failure(
                        Failure.Stage.DECODE, new PayloadDecodeException("bad json", new IOException("jackson")))))
                .isFalse();
        assertThat(causes.isDependency(Failure.without(Failure.Stage.RETRY))).isFalse();
    }

    @Test
    void aCycleInTheCauseChainEnds() {
        RuntimeException a = new RuntimeException("a");
        RuntimeException b = new RuntimeException("b", a);
        a.initCause(b);
        assertThat(causes.isDependency(a)).isFalse();
    }
}
