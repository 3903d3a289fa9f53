package dev.settle.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class OutcomeTest {

    @Test
    void ackRetryAndDropAreSingletons() {
        assertThat(Outcome.ack()).isSameAs(Outcome.ack()).isInstanceOf(Outcome.Ack.class);
        assertThat(Outcome.retry()).isSameAs(Outcome.retry()).isInstanceOf(Outcome.Retry.class);
        assertThat(Outcome.drop()).isSameAs(Outcome.drop()).isInstanceOf(Outcome.Drop.class);
    }

    @Test
    void ackAndDropAreDifferentOutcomes() {
        assertThat(Outcome.ack()).isNotEqualTo(Outcome.drop());
        assertThat(Outcome.retry()).isNotEqualTo(Outcome.ack());
    }

    @Test
    void retryAfterKeepsItsDelay() {
        Outcome outcome = Outcome.retryAfter(Duration.ofMillis(1500));

        assertThat(outcome).isEqualTo(new Outcome.RetryAfter(Duration.ofMillis(1500)));
        assertThat(((Outcome.RetryAfter) outcome).delay()).isEqualTo(Duration.ofMillis(1500));
    }

    @Test
    void retryAfterRejectsAZeroDelayNamingIt() {
        assertThatThrownBy(() -> Outcome.retryAfter(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("retryAfter delay must be positive, was PT0S; use Outcome.retry() to retry at once");
    }

    @Test
    void retryAfterRejectsANegativeDelayNamingIt() {
        assertThatThrownBy(() -> Outcome.retryAfter(Duration.ofSeconds(-3)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("was PT-3S");
    }

    @Test
    void retryAfterRejectsNull() {
        assertThatThrownBy(() -> Outcome.retryAfter(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("retryAfter delay must not be null");
    }

    @Test
    void theConstructorCannotBypassTheCheck() {
        assertThatThrownBy(() -> new Outcome.RetryAfter(Duration.ofNanos(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theOutcomesAreExactlyTheFourOfTheContract() {
        assertThat(Outcome.class.getPermittedSubclasses())
                .containsExactlyInAnyOrder(
                        Outcome.Ack.class, Outcome.Retry.class, Outcome.RetryAfter.class, Outcome.Drop.class);
    }
}
