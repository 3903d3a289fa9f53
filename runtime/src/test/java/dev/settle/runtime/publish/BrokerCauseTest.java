package dev.settle.runtime.publish;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.pulsar.client.api.PulsarClientException;
import org.junit.jupiter.api.Test;

class BrokerCauseTest {
    /** The chain the Pulsar client 4.2 gives for a producer or a subscription when nothing listens on the port. */
    private static Throwable refused(String address) {
        ConnectException root = new ConnectException("finishConnect(..) failed with error(-111): Connection refused");
        ConnectException annotated =
                new ConnectException("finishConnect(..) failed with error(-111): Connection refused: " + address);
        annotated.initCause(root);
        CompletionException completion = new CompletionException(annotated);
        PulsarClientException inner = new PulsarClientException(completion);
        return new PulsarClientException(new ExecutionException(inner));
    }

    @Test
    void aRefusedConnectionOnThisMachineIsOneLineThatSaysToStartSettleDev() {
        assertThat(BrokerCause.describe(refused("localhost/127.0.0.1:6650")))
                .isEqualTo("connection refused at localhost:6650 — is `settle dev` running?");
        assertThat(BrokerCause.describe(refused("/127.0.0.1:36683")))
                .isEqualTo("connection refused at 127.0.0.1:36683 — is `settle dev` running?");
    }

    @Test
    void aRefusedConnectionElsewhereAsksWhetherTheBrokerRunsThere() {
        assertThat(BrokerCause.unreachable(refused("pulsar.example.com/10.0.0.7:6650")))
                .hasValue("connection refused at pulsar.example.com:6650 — is the broker running there, and its port"
                        + " open from here?");
    }

    @Test
    void anyOtherFailureIsItsInnermostOwnWordsNotTheWrappers() {
        PulsarClientException.AuthorizationException denied =
                new PulsarClientException.AuthorizationException("Client is not authorized to subscribe");
        Throwable wrapped = new PulsarClientException(new ExecutionException(new CompletionException(denied)));
        assertThat(BrokerCause.unreachable(wrapped)).isEmpty();
        assertThat(BrokerCause.describe(wrapped))
                .isEqualTo("AuthorizationException: Client is not authorized to subscribe");
    }
}
