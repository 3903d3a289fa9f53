package dev.settle.testbroker;

import java.util.Comparator;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.ClassOrdererContext;
import org.junit.jupiter.api.Tag;

/**
 * Orders test classes so that those tagged {@code reliability} (minutes of child processes: kills, restarts, the
 * LocalRunner comparison) start first, the rest after them in the order they came. With test classes run a few at a
 * time, a minutes-long class that starts last ends the build minutes after every other class has finished: the runtime
 * module's integration tests under {@code -Preliability} are bounded by how they pack, not only by how long they take
 * (issue 43). Set it with {@code junit.jupiter.testclass.order.default=dev.settle.testbroker.ReliabilityClassesFirst}.
 */
public final class ReliabilityClassesFirst implements ClassOrderer {
    static final String TAG = "reliability";

    @Override
    public void orderClasses(ClassOrdererContext context) {
        // List.sort is stable: the untagged classes keep the order they came in.
        context.getClassDescriptors()
                .sort(Comparator.comparing(descriptor -> !descriptor.findRepeatableAnnotations(Tag.class).stream()
                        .anyMatch(tag -> tag.value().equals(TAG))));
    }
}
