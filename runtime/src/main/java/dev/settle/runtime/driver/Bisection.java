package dev.settle.runtime.driver;

import java.util.ArrayList;
import java.util.List;

/**
 * Finds the deliveries that fail alone in a batch whose call threw without saying which (issue 47, after AWS Lambda's
 * {@code BisectBatchOnFunctionError}): the batch is split in halves and each half called again, in the process and
 * without nacking anything, down to single deliveries. A half that answers settles its deliveries with their answers;
 * only a single delivery whose call throws gets the failure, so only it spends an attempt. With {@code p} poison
 * messages in {@code n}, it takes at most {@code 1 + 2p·log2(n/p)} calls or so (37 for 3 in 100). Stateless.
 */
final class Bisection {
    /** One call of the handler for some deliveries: an answer for each, or a throw for all. */
    @FunctionalInterface
    interface Call<W> {
        List<BatchAnswer> call(List<W> batch) throws Exception;
    }

    /** What a bisection did, for the metrics. */
    interface Observer {
        /** The handler is called with {@code size} deliveries. */
        default void called(int size) {}

        /** A call of {@code size} deliveries threw: it is split in two. */
        default void split(int size) {}
    }

    private Bisection() {}

    /**
     * The answer for each delivery of {@code batch}, in its order, calling {@code call} as often as it takes. A
     * {@link VirtualMachineError} is not a poison message: it goes to the caller at once.
     */
    static <W> List<BatchAnswer> answers(List<W> batch, Call<W> call, Observer observer) {
        observer.called(batch.size());
        List<BatchAnswer> answers;
        try {
            answers = call.call(batch);
        } catch (VirtualMachineError fatal) {
            throw fatal;
        } catch (Exception | Error thrown) {
            if (batch.size() == 1) {
                return List.of(BatchAnswer.failed(thrown));
            }
            observer.split(batch.size());
            int half = batch.size() / 2;
            List<BatchAnswer> halves = new ArrayList<>(batch.size());
            halves.addAll(answers(batch.subList(0, half), call, observer));
            halves.addAll(answers(batch.subList(half, batch.size()), call, observer));
            return halves;
        }
        if (answers.size() != batch.size()) {
            throw new IllegalStateException(
                    "the batch port answered " + answers.size() + " of " + batch.size() + " deliveries (a bug)");
        }
        return answers;
    }
}
