package dev.settle.quickstart;

/**
 * The clone's build output (the modules' target folders) as a lock between this module's test classes, which run two
 * at a time: a class that runs Maven in the clone rebuilds it, rewriting JARs and class folders in place, and holds the
 * lock alone ({@code READ_WRITE}); a class that only runs or reads what the build made shares it ({@code READ}).
 */
final class CloneOutput {
    static final String LOCK = "the clone's build output";

    private CloneOutput() {}
}
