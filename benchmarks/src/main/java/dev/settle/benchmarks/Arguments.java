package dev.settle.benchmarks;

import java.util.List;
import java.util.Optional;

/**
 * What {@code benchmarks/run.sh} was asked for: the mode's sizes, one measurement or all, and a git ref whose build of
 * Settle to measure beside this tree's.
 *
 * @param only the one measurement to run, to look into it
 * @param compare a git ref (a branch, a tag, a commit, {@code HEAD~1}): Settle built there is measured against Settle
 *     built from this tree, on the message-path rows, in one run
 * @param profile whether the broker is profiled over each drain of the message path ({@link BrokerProfile})
 */
record Arguments(Sizes sizes, Optional<String> only, Optional<String> compare, boolean profile) {
    /** Without {@code --profile}. */
    Arguments(Sizes sizes, Optional<String> only, Optional<String> compare) {
        this(sizes, only, compare, false);
    }

    static final List<String> MEASUREMENTS = List.of(
            "noop",
            "tracing",
            "journal",
            "io",
            "function",
            "exactly",
            "retry",
            "held",
            "keyhold",
            "batch",
            "breaker",
            "scheduler",
            "start",
            "commands",
            "memory");

    /** The drains of the message path: what {@code --quick} and {@code --compare} run. */
    static final List<String> MESSAGE_PATH = List.of("noop", "function", "exactly");

    static final String USAGE =
            "usage: benchmarks/run.sh [--quick | --smoke] [--compare <git ref>] [--profile] [--only "
                    + String.join("|", MEASUREMENTS) + "]";

    /** @throws IllegalArgumentException naming the argument at fault, with {@link #USAGE} */
    static Arguments parse(String... args) {
        Sizes sizes = null;
        String only = null;
        String compare = null;
        boolean profile = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--quick", "--smoke" -> {
                    if (sizes != null) {
                        throw refused("'" + arg + "' after '--" + sizes.name() + "': choose one mode");
                    }
                    sizes = arg.equals("--quick") ? Sizes.QUICK : Sizes.SMOKE;
                }
                case "--only" -> {
                    only = value(args, i++, only);
                    if (!MEASUREMENTS.contains(only)) {
                        throw refused("--only '" + only + "': expected one of " + String.join(", ", MEASUREMENTS));
                    }
                }
                case "--compare" -> compare = value(args, i++, compare);
                case "--profile" -> profile = true;
                default -> throw refused("unknown argument '" + arg + "'");
            }
        }
        if (compare != null && only != null && !MESSAGE_PATH.contains(only)) {
            throw refused("--only '" + only + "' with --compare: a comparison measures the message path only ("
                    + String.join(", ", MESSAGE_PATH) + ")");
        }
        return new Arguments(
                sizes == null ? Sizes.FULL : sizes, Optional.ofNullable(only), Optional.ofNullable(compare), profile);
    }

    private static String value(String[] args, int at, String before) {
        if (before != null) {
            throw refused("'" + args[at] + "' given twice ('" + before + "' first): give it once");
        }
        if (at + 1 >= args.length || args[at + 1].startsWith("--")) {
            throw refused("'" + args[at] + "' needs a value");
        }
        return args[at + 1];
    }

    private static IllegalArgumentException refused(String what) {
        return new IllegalArgumentException(what + "\n" + USAGE);
    }

    /**
     * Whether {@code measurement} runs: the one asked for; else, in a comparison or a quick run, the message path's;
     * else all but memory (five minutes by itself: only when asked for).
     */
    boolean runs(String measurement) {
        if (only.isPresent()) {
            return only.get().equals(measurement);
        }
        if (compare.isPresent() || sizes.messagePathOnly()) {
            return MESSAGE_PATH.contains(measurement);
        }
        return !measurement.equals("memory");
    }

    /** How the run is described with its table. */
    String describe() {
        return sizes.name() + " mode" + only.map(m -> ", only " + m).orElse("")
                + compare.map(ref -> ", compared with " + ref).orElse("")
                + (profile ? ", the broker profiled" : "");
    }
}
