package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.runtime.driver.SharedTransaction.Event;
import dev.settle.runtime.driver.SharedTransaction.Next;
import dev.settle.runtime.driver.SharedTransaction.State;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.apache.pulsar.client.api.MessageId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** A transaction's state machine: when deliveries that share it commit it, leave it or abort it, and what it refuses. */
class SharedTransactionTest {
    private SharedTransaction shared = opened(100);
    private final MessageId first = MessageId.earliest;
    private final MessageId second = MessageId.latest;

    /**
     * Where each event takes a transaction from each state, with the fixture {@link #in} builds for that state: "-" is
     * an event the state refuses (a bug). A row or a column left out, or one too many, fails the test.
     */
    private static final String TRANSITIONS = """
            state        OPEN  JOIN   CLOSE       EXPECT      STORED      LEFT        QUIET       ABORT       TIME_OUT    COMMITTED  COMMIT_FAILED  COMMIT_UNCONFIRMED  UNUSED
            SPARE        OPEN  -      -           -           -           -           -           -           -           -          -              -                   DISCARDED
            OPEN         -     OPEN   CLOSED      OPEN        OPEN        OPEN        OPEN        ABORTING    ABORTED     -          -              -                   -
            CLOSED       -     -      CLOSED      CLOSED      CLOSED      CLOSED      CLOSED      ABORTING    ABORTED     -          -              -                   -
            COMMITTING   -     -      COMMITTING  -           -           -           -           COMMITTING  COMMITTING  COMMITTED  ABORTED        UNCONFIRMED         -
            COMMITTED    -     -      COMMITTED   -           -           -           -           COMMITTED   COMMITTED   -          -              -                   -
            UNCONFIRMED  -     -      UNCONFIRMED -           -           -           -           UNCONFIRMED UNCONFIRMED -          -              -                   -
            DISCARDED    -     -      DISCARDED   -           -           -           -           DISCARDED   DISCARDED   -          -              -                   -
            ABORTING     -     -      ABORTING    ABORTING    ABORTING    ABORTING    ABORTED     ABORTING    ABORTED     -          -              -                   -
            ABORTED      -     -      ABORTED     ABORTED     ABORTED     ABORTED     ABORTED     ABORTED     ABORTED     -          -              -                   -
            """;

    private static SharedTransaction opened(int maxDeliveries) {
        SharedTransaction shared = new SharedTransaction(new CompletableFuture<>(), 0, maxDeliveries);
        shared.open();
        return shared;
    }

    /**
     * A transaction in {@code state}: OPEN and ABORTING with one delivery still running and sending, CLOSED with two,
     * the others reached the shortest way.
     */
    private static SharedTransaction in(State state) {
        MessageId input = MessageId.earliest;
        if (state == State.SPARE) {
            return new SharedTransaction(new CompletableFuture<>(), 0, 100);
        }
        SharedTransaction shared = opened(100);
        shared.join(input);
        switch (state) {
            case CLOSED -> {
                shared.join(MessageId.latest);
                shared.close();
            }
            case COMMITTING, COMMITTED, UNCONFIRMED -> {
                shared.expect(new CompletableFuture<>());
                shared.quiet();
                shared.stored(input);
                assertThat(shared.close()).isEqualTo(Next.COMMIT);
                if (state == State.COMMITTED) {
                    shared.committed();
                } else if (state == State.UNCONFIRMED) {
                    shared.commitUnconfirmed();
                }
            }
            case DISCARDED -> {
                shared.quiet();
                shared.left();
                assertThat(shared.close()).isEqualTo(Next.DISCARD);
            }
            case ABORTING, ABORTED -> {
                shared.abort(new IllegalStateException("a delivery failed after a send"));
                if (state == State.ABORTED) {
                    assertThat(shared.quiet()).isEqualTo(Next.SEND_ABORT);
                }
            }
            default -> {}
        }
        assertThat(shared.state()).as("the fixture").isEqualTo(state);
        return shared;
    }

    private static void fire(SharedTransaction shared, Event event) {
        IllegalStateException reason = new IllegalStateException("the test's reason");
        switch (event) {
            case OPEN -> shared.open();
            case JOIN -> shared.join(MessageId.latest);
            case CLOSE -> shared.close();
            case EXPECT -> shared.expect(new CompletableFuture<>());
            case STORED -> shared.stored(MessageId.earliest);
            case LEFT -> shared.left();
            case QUIET -> shared.quiet();
            case ABORT -> shared.abort(reason);
            case TIME_OUT -> shared.timedOut(reason);
            case COMMITTED -> shared.committed();
            case COMMIT_FAILED -> shared.commitFailed(reason);
            case COMMIT_UNCONFIRMED -> shared.commitUnconfirmed();
            case UNUSED -> shared.unused();
        }
    }

    static Stream<Arguments> transitions() {
        List<String[]> rows =
                TRANSITIONS.lines().map(line -> line.trim().split("\\s+")).toList();
        assertThat(Arrays.asList(rows.get(0)).subList(1, rows.get(0).length))
                .as("the table's columns are every event")
                .containsExactlyElementsOf(
                        Stream.of(Event.values()).map(Enum::name).toList());
        Map<State, String[]> byState = new EnumMap<>(State.class);
        rows.subList(1, rows.size()).forEach(row -> byState.put(State.valueOf(row[0]), row));
        assertThat(byState.keySet()).as("the table's rows are every state").containsExactly(State.values());
        List<Arguments> cases = new ArrayList<>();
        for (State state : State.values()) {
            for (Event event : Event.values()) {
                cases.add(Arguments.of(state, event, byState.get(state)[event.ordinal() + 1]));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} + {1} -> {2}")
    @MethodSource("transitions")
    void everyEventMovesEachStateAsTheTableSaysAndAnIllegalOneIsRefusedNamingBoth(
            State state, Event event, String expected) {
        SharedTransaction shared = in(state);

        if (expected.equals("-")) {
            assertThatThrownBy(() -> fire(shared, event))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("transaction (not begun) " + state + " cannot take event " + event)
                    .hasMessageContaining("a bug in Settle");
            assertThat(shared.state()).as("a refused event changes nothing").isEqualTo(state);
        } else {
            fire(shared, event);
            assertThat(shared.state()).isEqualTo(State.valueOf(expected));
        }
    }

    @Test
    void itCommitsOnceClosedAndEveryDeliveryOfItIsSettled() {
        shared.join(first);
        shared.join(first);
        CompletableFuture<Void> a = new CompletableFuture<>();
        CompletableFuture<Void> b = new CompletableFuture<>();

        shared.expect(a);
        shared.expect(b);
        assertThat(shared.stored(first)).isEqualTo(Next.NOTHING);
        assertThat(shared.close()).as("one delivery still running").isEqualTo(Next.NOTHING);
        assertThat(shared.stored(second)).isEqualTo(Next.COMMIT);
        assertThat(shared.readyInputs()).containsExactly(first, second);
        assertThat(shared.waiting()).containsExactly(a, b);
        assertThat(shared.close()).as("closed twice").isEqualTo(Next.NOTHING);
        assertThat(shared.state()).isEqualTo(State.COMMITTING);
    }

    @Test
    void itKnowsTheInputsOfItsDeliveries() {
        shared.join(first);

        assertThat(shared.holds(first)).isTrue();
        assertThat(shared.holds(second)).isFalse();
    }

    @Test
    void itClosesWhenFullAndTakesNoMore() {
        shared = opened(2);
        assertThat(shared.join(first)).isEqualTo(Next.NOTHING);
        assertThat(shared.join(first)).isEqualTo(Next.FULL);
        assertThatThrownBy(() -> shared.join(second))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("CLOSED cannot take event JOIN (only in [OPEN])");

        shared.expect(new CompletableFuture<>());
        shared.stored(first);
        assertThat(shared.left()).isEqualTo(Next.COMMIT);
        assertThat(shared.readyInputs()).containsExactly(first);
    }

    @Test
    void aDeliveryThatLeftIsNotAcknowledgedAndATransactionEveryoneLeftIsDiscarded() {
        shared.join(first);
        shared.join(first);
        shared.close();

        assertThat(shared.left()).isEqualTo(Next.NOTHING);
        assertThat(shared.left()).isEqualTo(Next.DISCARD);
        assertThat(shared.state()).isEqualTo(State.DISCARDED);
    }

    @Test
    void anAbortFailsTheWaitingDeliveriesAndThoseSettledLaterWithItsReason() {
        shared.join(first);
        shared.join(first);
        shared.join(first);
        CompletableFuture<Void> waiting = new CompletableFuture<>();
        shared.expect(waiting);
        shared.stored(first);
        CompletableFuture<Void> storing = new CompletableFuture<>();
        shared.expect(storing);
        IllegalStateException reason = new IllegalStateException("another delivery failed after a send");

        SharedTransaction.Aborted aborted = shared.abort(reason);
        assertThat(aborted.failed())
                .as("the ready one and the one whose outputs are still being stored")
                .containsExactly(waiting, storing);
        assertThat(aborted.abortedNow()).isTrue();
        assertThat(shared.abort(reason)).as("aborted twice").isNull();
        assertThat(shared.stored(second)).as("stored after the abort").isEqualTo(Next.NOTHING);

        CompletableFuture<Void> later = new CompletableFuture<>();
        shared.expect(later);
        assertThat(later).isCompletedExceptionally();
        assertThat(later.handle((none, error) -> error).join()).isSameAs(reason);
        assertThat(shared.left()).as("nothing to commit or discard").isEqualTo(Next.NOTHING);
        assertThat(shared.close()).isEqualTo(Next.NOTHING);
    }

    /**
     * The client may let an abort overtake a send begun before it, and the broker then holds the transaction open on
     * that topic: the abort is sent once, when none of its deliveries is still sending.
     */
    @Test
    void theAbortIsSentOnceTheLastDeliveryStillSendingIsQuiet() {
        shared.join(first);
        shared.join(second);
        shared.quiet();

        assertThat(shared.abort(new IllegalStateException("failed after a send"))
                        .sendNow())
                .as("one delivery still sending")
                .isFalse();
        assertThat(shared.state()).isEqualTo(State.ABORTING);
        assertThat(shared.quiet()).isEqualTo(Next.SEND_ABORT);
        assertThat(shared.state()).isEqualTo(State.ABORTED);
        assertThat(shared.quiet()).as("sent once").isEqualTo(Next.NOTHING);
    }

    @Test
    void anAbortOfATransactionWhoseDeliveriesAreAllQuietIsSentAtOnce() {
        shared.join(first);
        shared.quiet();

        SharedTransaction.Aborted aborted = shared.abort(new IllegalStateException("an output was not stored"));

        assertThat(aborted.sendNow()).isTrue();
        assertThat(shared.state()).isEqualTo(State.ABORTED);
    }

    /** The coordinator has aborted it at its timeout: none of its sends is stored any more, so nothing is waited for. */
    @Test
    void aTimeoutSendsTheAbortAtOnceEvenWhileADeliveryIsStillSending() {
        shared.join(first);
        shared.abort(new IllegalStateException("failed after a send"));

        SharedTransaction.Aborted timedOut = shared.timedOut(new IllegalStateException("ran out of its timeout"));

        assertThat(timedOut.sendNow()).isTrue();
        assertThat(timedOut.abortedNow()).as("aborted before, counted then").isFalse();
        assertThat(shared.timedOut(new IllegalStateException("again")))
                .as("sent once")
                .isNull();
    }

    @Test
    void aCommittingTransactionCannotBeAborted() {
        shared = opened(1);
        shared.join(first);
        shared.expect(new CompletableFuture<>());
        shared.stored(first);

        assertThat(shared.abort(new IllegalStateException("too late"))).isNull();
        assertThat(shared.timedOut(new IllegalStateException("too late"))).isNull();
        assertThat(shared.waiting()).hasSize(1);
        assertThat(shared.deliveries()).isEqualTo(1);
        assertThat(shared.state()).isEqualTo(State.COMMITTING);
    }

    @Test
    void anEndedTransactionCancelsItsExpiry() {
        List<String> cancelled = new ArrayList<>();
        shared.expiresBy(() -> cancelled.add("expiry"));
        shared.join(first);
        shared.quiet();
        shared.left();
        assertThat(cancelled).as("still closing").isEmpty();

        shared.close();

        assertThat(cancelled).containsExactly("expiry");
    }
}
