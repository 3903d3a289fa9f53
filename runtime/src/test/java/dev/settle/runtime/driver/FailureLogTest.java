package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.settle.runtime.time.ManualTime;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class FailureLogTest {
    private final Logger handlerLog = (Logger) LoggerFactory.getLogger("dev.settle.runtime.handler");
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private final ManualTime time = new ManualTime();
    private final FailureLog failures = new FailureLog("orders", time);
    private static final Failure BOOM = new Failure(Failure.Stage.HANDLER, new IllegalStateException("boom"));

    @BeforeEach
    void listen() {
        logged.list = new CopyOnWriteArrayList<>();
        logged.start();
        handlerLog.addAppender(logged);
    }

    @AfterEach
    void stopListening() {
        handlerLog.detachAppender(logged);
    }

    @Test
    void aFailureBeforeTheLastAttemptSaysTheMessageWillBeRetried() {
        failures.failed("handler h", BOOM, 1, Optional.empty());

        assertThat(logged.list)
                .singleElement()
                .satisfies(
                        event -> assertThat(event.getFormattedMessage())
                                .isEqualTo(
                                        "subscription 'orders': handler h failed (stage handler) on attempt 1; it will be retried"));
    }

    @Test
    void aFailureOnTheLastAttemptSaysTheMessageGoesToTheDeadLetterTopicNotThatItWillBeRetried() {
        failures.failed("handler h", BOOM, 3, Optional.of("persistent://public/default/orders-dlq"));

        assertThat(logged.list)
                .singleElement()
                .satisfies(event -> assertThat(event.getFormattedMessage())
                        .isEqualTo(
                                "subscription 'orders': handler h failed (stage handler) on attempt 3; that was its last attempt: it goes"
                                        + " to the dead-letter topic persistent://public/default/orders-dlq")
                        .doesNotContain("retried"));
    }

    @Test
    void failuresWithinTenSecondsOfTheLastOneLoggedAreCountedNotLogged() {
        failures.failed("handler h", BOOM, 1, Optional.empty());
        failures.failed("handler h", BOOM, 2, Optional.empty());
        time.advance(Duration.ofSeconds(10));
        failures.failed("handler h", BOOM, 3, Optional.empty());

        assertThat(logged.list).hasSize(2);
        assertThat(logged.list.get(1).getFormattedMessage())
                .endsWith("it will be retried (1 more failures in the last 10 s not logged)");
    }
}
