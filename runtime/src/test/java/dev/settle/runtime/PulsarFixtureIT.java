package dev.settle.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.settle.testbroker.PulsarFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.PulsarClient;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fixture itself, on the shared broker: a client and an admin that work, names of the test's own, and everything
 * the test opened closed when it ends (the second test looks at what the first left).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PulsarFixtureIT {
    private static final AtomicBoolean RUNTIME_CLOSED = new AtomicBoolean();
    private static PulsarClient firstClient;
    private static PulsarAdmin firstAdmin;
    private static Path firstFolder;

    @RegisterExtension
    final PulsarFixture pulsar = PulsarFixture.shared();

    @Test
    @Order(1)
    void theClientAndAdminReachTheBrokerAndTheBacklogIsWhatWasPublished() throws Exception {
        String topic = pulsar.topic("fixture");
        String subscription = PulsarFixture.unique("fixture");

        pulsar.backlog(topic, subscription, 5, i -> "m" + i);

        pulsar.awaitBacklog(topic, subscription, 5, Duration.ofSeconds(30));
        assertThat(pulsar.admin().topics().getList("public/default")).contains(topic);
        assertThat(pulsar.manifest().text())
                .contains("serviceUrl: " + pulsar.endpoints().serviceUrl());
        Files.writeString(pulsar.folder().resolve("left.txt"), "left");
        pulsar.closeAfterTest(() -> RUNTIME_CLOSED.set(true));
        firstClient = pulsar.client();
        firstAdmin = pulsar.admin();
        firstFolder = pulsar.folder();
    }

    @Test
    @Order(2)
    void whatTheLastTestOpenedIsClosedAndThisTestHasItsOwn() {
        assertThat(RUNTIME_CLOSED).as("closeAfterTest's runtime closed").isTrue();
        assertThat(firstClient.isClosed()).as("the first test's client closed").isTrue();
        assertThat(firstFolder).doesNotExist();
        assertThat(pulsar.client()).isNotSameAs(firstClient);
        assertThat(pulsar.admin()).isNotSameAs(firstAdmin);
        assertThat(pulsar.topic("fixture")).isNotEqualTo(pulsar.topic("fixture"));
    }
}
