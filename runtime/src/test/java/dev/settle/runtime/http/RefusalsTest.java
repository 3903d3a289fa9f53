package dev.settle.runtime.http;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.settle.runtime.http.Refusals.Reason;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RefusalsTest {
    private final Logger log = (Logger) LoggerFactory.getLogger(RefusalsTest.class);
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
    private final AtomicLong now = new AtomicLong(5_000);
    private final List<Reason> counted = new ArrayList<>();
    private final Refusals refusals = new Refusals("admin", log, counted::add, now::get);

    @BeforeEach
    void listen() {
        logged.start();
        log.addAppender(logged);
    }

    @AfterEach
    void stopListening() {
        log.detachAppender(logged);
    }

    @Test
    void everyRefusalIsCountedButAFloodWritesOneLineAMinute() throws Exception {
        InetAddress peer = InetAddress.getByName("127.0.0.2");
        for (int i = 0; i < 1000; i++) {
            refusals.refused(i % 2 == 0 ? Reason.WRONG_TOKEN : Reason.UNAUTHENTICATED, peer);
            now.addAndGet(TimeUnit.MILLISECONDS.toNanos(10));
        }
        // 10 s of refusals: the first line alone.
        assertThat(counted).hasSize(1000);
        assertThat(logged.list).hasSize(1);
        assertThat(logged.list.get(0).getFormattedMessage())
                .isEqualTo("admin: refused a request from 127.0.0.2 (wrong_token); further refusals on this port are"
                        + " summed up here at most once a minute and counted in settle_http_refused_total");

        now.addAndGet(TimeUnit.SECONDS.toNanos(60));
        refusals.refused(Reason.THROTTLED, peer);

        assertThat(logged.list).hasSize(2);
        assertThat(logged.list.get(1).getFormattedMessage())
                .isEqualTo("admin: refused 1000 requests in the last 70 s (unauthenticated 500, wrong_token 499,"
                        + " throttled 1), the last from 127.0.0.2");
    }

    @Test
    void reasonsAreLabelledInLowerCase() {
        assertThat(Reason.WRONG_TOKEN.label()).isEqualTo("wrong_token");
        assertThat(Reason.TOO_SLOW.label()).isEqualTo("too_slow");
    }
}
