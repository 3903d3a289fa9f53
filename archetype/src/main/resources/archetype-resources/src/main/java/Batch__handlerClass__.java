package ${package};

import dev.settle.sdk.BatchHandler;
import dev.settle.sdk.BatchResult;
import dev.settle.sdk.Delivery;
import dev.settle.sdk.HandlerContext;
import java.util.ArrayList;
import java.util.List;

/**
 * Greets the names published to the topic many at a time, as a bulk write to a database or a search index would: one
 * call for a batch of up to the manifest's {@code batch.maxMessages} names, an outcome for each.
 *
 * <ul>
 *   <li>a blank name is dropped: acknowledged, counted as {@code drop};
 *   <li>{@code poison} makes the whole call fail, as a bulk request refused without saying which item was bad: Settle
 *       then splits the batch in halves and calls again until {@code poison} is alone, so the other names are
 *       greeted and only it spends its attempts and reaches the dead-letter topic;
 *   <li>anything else is greeted and acknowledged.
 * </ul>
 *
 * Settle may call it with a name more than once while it splits a batch, and delivers at least once: keep batch
 * handlers idempotent. To run it rather than {@link ${handlerClass}}, name it in settle.yaml's {@code handler:}.
 */
public final class Batch${handlerClass} implements BatchHandler<String> {
    private volatile String greeting = "hello";

    @Override
    public void open(HandlerContext context) {
        greeting = context.config().getOrDefault("greeting", greeting);
    }

    @Override
    public BatchResult handle(List<Delivery<String>> batch) {
        BatchResult result = BatchResult.create();
        List<String> greeted = new ArrayList<>();
        for (Delivery<String> delivery : batch) {
            String name = delivery.value().strip();
            if (name.isEmpty()) {
                result.drop(delivery);
            } else if (name.equals("poison")) {
                throw new IllegalArgumentException("cannot greet " + name);
            } else {
                greeted.add(name);
                result.ack(delivery);
            }
        }
        if (!greeted.isEmpty()) {
            System.out.println(greeting + ", " + String.join(", ", greeted));
        }
        return result;
    }
}
