package dev.settle.fidelity;

import dev.settle.sdk.BatchHandler;
import dev.settle.sdk.BatchResult;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.HandlerContext;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The batch handler of {@link BatchFidelityIT}: a bulk write that fails as a whole at the first poison message it
 * meets (config {@code poison}, comma-separated values), naming it; every call is appended to the file {@code calls}
 * as one line of {@code value@attempt}, so the kit's calls and the broker's can be compared.
 */
public final class BulkWriter implements BatchHandler<String> {
    private Set<String> poison;
    private Path calls;

    @Override
    public void open(HandlerContext context) {
        poison = Set.of(context.config().get("poison").split(","));
        calls = Path.of(context.config().get("calls"));
    }

    @Override
    public BatchResult handle(List<Delivery<String>> batch) throws IOException {
        Files.writeString(
                calls,
                batch.stream().map(d -> d.value() + "@" + d.attempt()).collect(Collectors.joining(",")) + "\n",
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
        for (Delivery<String> delivery : batch) {
            if (poison.contains(delivery.value())) {
                throw new IllegalStateException("bulk write refused " + delivery.value());
            }
        }
        return BatchResult.acknowledgeAll(batch);
    }
}
