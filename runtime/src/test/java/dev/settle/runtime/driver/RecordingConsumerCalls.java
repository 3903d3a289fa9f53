package dev.settle.runtime.driver;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Consumer calls that only record what was asked of them ("acknowledge m", "negativeAcknowledge m"), in order. */
final class RecordingConsumerCalls implements ConsumerCalls<String> {
    final List<String> calls = new ArrayList<>();

    @Override
    public CompletionStage<Void> acknowledge(String message) {
        calls.add("acknowledge " + message);
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void negativeAcknowledge(String message) {
        calls.add("negativeAcknowledge " + message);
    }
}
