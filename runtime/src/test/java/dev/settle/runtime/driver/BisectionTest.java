package dev.settle.runtime.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.settle.sdk.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class BisectionTest {
    private final List<Integer> callSizes = new ArrayList<>();
    private final List<Integer> splits = new ArrayList<>();
    private final Bisection.Observer observer = new Bisection.Observer() {
        @Override
        public void called(int size) {
            callSizes.add(size);
        }

        @Override
        public void split(int size) {
            splits.add(size);
        }
    };

    /** Throws for a batch holding a poison message, naming the first; acknowledges every other batch. */
    private static Bisection.Call<Integer> throwingFor(Set<Integer> poison) {
        return batch -> {
            for (int message : batch) {
                if (poison.contains(message)) {
                    throw new IllegalStateException("poison " + message);
                }
            }
            return batch.stream().map(message -> BatchAnswer.of(Outcome.ack())).toList();
        };
    }

    private static List<Integer> messages(int count) {
        return IntStream.range(0, count).boxed().toList();
    }

    @Test
    void aBatchThatAnswersIsCalledOnceAndKeepsItsAnswers() {
        Bisection.Call<Integer> answers = batch -> batch.stream()
                .map(message -> message % 2 == 0 ? BatchAnswer.of(Outcome.retry()) : BatchAnswer.none())
                .toList();

        List<BatchAnswer> result = Bisection.answers(messages(4), answers, observer);

        assertThat(result)
                .containsExactly(
                        BatchAnswer.of(Outcome.retry()),
                        BatchAnswer.none(),
                        BatchAnswer.of(Outcome.retry()),
                        BatchAnswer.none());
        assertThat(callSizes).containsExactly(4);
        assertThat(splits).isEmpty();
    }

    @Test
    void threePoisonMessagesInAHundredAreIsolatedInAtMostFortyCallsEachFailingWithItsOwnCause() {
        Set<Integer> poison = Set.of(7, 50, 93);

        List<BatchAnswer> result = Bisection.answers(messages(100), throwingFor(poison), observer);

        for (int message = 0; message < 100; message++) {
            BatchAnswer answer = result.get(message);
            if (poison.contains(message)) {
                assertThat(answer.failure()).hasMessage("poison " + message);
            } else {
                assertThat(answer).isEqualTo(BatchAnswer.of(Outcome.ack()));
            }
        }
        assertThat(callSizes).hasSizeLessThanOrEqualTo(40);
        // Each poison message was called alone exactly once: only that call spends its attempt.
        assertThat(callSizes.stream().filter(size -> size == 1)).hasSizeLessThanOrEqualTo(6);
        assertThat(splits).first().isEqualTo(100);
    }

    @Test
    void aBatchWhereEveryMessageFailsEndsWithEachCalledAlone() {
        List<BatchAnswer> result =
                Bisection.answers(messages(8), throwingFor(Set.of(0, 1, 2, 3, 4, 5, 6, 7)), observer);

        assertThat(result).allSatisfy(answer -> assertThat(answer.failure()).isInstanceOf(IllegalStateException.class));
        // 8 + 2·4 + 4·2 + 8·1: a full binary tree, 15 calls, 7 splits.
        assertThat(callSizes).hasSize(15);
        assertThat(splits).hasSize(7);
    }

    @Test
    void aSingleMessageWhoseCallThrowsFailsWithWhatWasThrownAndIsNotSplit() {
        List<BatchAnswer> result = Bisection.answers(List.of(3), throwingFor(Set.of(3)), observer);

        assertThat(result)
                .singleElement()
                .satisfies(answer -> assertThat(answer.failure()).hasMessage("poison 3"));
        assertThat(callSizes).containsExactly(1);
        assertThat(splits).isEmpty();
    }

    @Test
    void anErrorFromTheHandlerIsAPoisonMessageLikeAnExceptionButOutOfMemoryStopsAtOnce() {
        Bisection.Call<Integer> assertionFails = batch -> {
            if (batch.contains(1)) {
                throw new AssertionError("bug on 1");
            }
            return batch.stream().map(message -> BatchAnswer.of(Outcome.ack())).toList();
        };
        assertThat(Bisection.answers(messages(2), assertionFails, observer)
                        .get(1)
                        .failure())
                .isInstanceOf(AssertionError.class);

        Bisection.Call<Integer> outOfMemory = batch -> {
            throw new OutOfMemoryError("heap");
        };
        callSizes.clear();
        assertThatThrownBy(() -> Bisection.answers(messages(4), outOfMemory, observer))
                .isInstanceOf(OutOfMemoryError.class);
        assertThat(callSizes).containsExactly(4);
    }

    @Test
    void aPortThatAnswersTheWrongNumberOfDeliveriesIsABugAndIsNotSplit() {
        Bisection.Call<Integer> short1 = batch -> List.of(BatchAnswer.of(Outcome.ack()));

        assertThatThrownBy(() -> Bisection.answers(messages(3), short1, observer))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("answered 1 of 3");
        assertThat(splits).isEmpty();
    }
}
