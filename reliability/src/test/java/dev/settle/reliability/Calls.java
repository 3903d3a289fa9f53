package dev.settle.reliability;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongFunction;

/**
 * What the recording handler wrote, from every runtime of a run: the ledger the suite checks. Each runtime
 * ("instance") writes a file of its own, in the order of its calls.
 */
final class Calls {
    /** One handler call: {@code index} is its place in its instance's file. */
    record Call(long sequence, int attempt, String outcome, long millis, String instance, int index) {
        boolean acked() {
            return outcome.equals("ack");
        }
    }

    private final List<Call> calls;
    /** Per sequence, its calls in the order read (instances in the order given, each in file order). */
    private final Map<Long, List<Call>> bySequence = new HashMap<>();

    private Calls(List<Call> calls) {
        this.calls = calls;
        for (Call call : calls) {
            bySequence.computeIfAbsent(call.sequence(), s -> new ArrayList<>()).add(call);
        }
    }

    /** The files of a run, instance name to file, in the order the instances ran. */
    static Calls read(Map<String, Path> files) throws IOException {
        List<Call> calls = new ArrayList<>();
        for (Map.Entry<String, Path> file : files.entrySet()) {
            if (!Files.exists(file.getValue())) {
                continue;
            }
            int index = 0;
            String text = Files.readString(file.getValue(), StandardCharsets.US_ASCII);
            // A record is complete with its newline. Read while a handler writes, the last one can be seen in part
            // (seen once: '10288 1'): it is left for the next read.
            String complete = text.substring(0, text.lastIndexOf('\n') + 1);
            for (String line : complete.lines().toList()) {
                String[] fields = line.split(" ");
                if (fields.length != 4) {
                    // A SIGKILL can cut no line in half (one write each), so this is a defect of the handler.
                    throw new IllegalStateException(file.getValue() + ": not a call record: '" + line + "'");
                }
                calls.add(new Call(
                        Long.parseLong(fields[0]),
                        Integer.parseInt(fields[1]),
                        fields[2],
                        Long.parseLong(fields[3]),
                        file.getKey(),
                        index++));
            }
        }
        return new Calls(calls);
    }

    List<Call> all() {
        return calls;
    }

    /** Sequences in {@code [0, count)} with no acknowledgement recorded anywhere. */
    TreeSet<Long> lost(long count) {
        TreeSet<Long> lost = new TreeSet<>();
        for (long sequence = 0; sequence < count; sequence++) {
            if (acks(sequence).isEmpty()) {
                lost.add(sequence);
            }
        }
        return lost;
    }

    List<Call> acks(long sequence) {
        return bySequence.getOrDefault(sequence, List.of()).stream()
                .filter(Call::acked)
                .toList();
    }

    /** Sequences acknowledged more than once, over all instances. */
    long duplicates() {
        return bySequence.keySet().stream().filter(s -> acks(s).size() > 1).count();
    }

    /**
     * Sequences acknowledged by two instances at the same attempt, the second while the first was still running
     * ({@code gone}: when an instance was stopped or killed; absent, it ran to the end): one copy the broker
     * dispatched twice with one redelivery count (docs/pulsar-client-notes.md, seen on Shared subscriptions with
     * retries). Not a redelivery: a negative acknowledgement counts one attempt more, and an acknowledgement is lost
     * only with its runtime's connection.
     */
    Set<Long> dispatchedTwice(Map<String, Long> gone) {
        Set<Long> twice = new TreeSet<>();
        bySequence.forEach((sequence, ofSequence) -> {
            List<Call> acks = acks(sequence);
            for (Call first : acks) {
                for (Call second : acks) {
                    if (!first.instance().equals(second.instance())
                            && first.attempt() == second.attempt()
                            && first.millis() <= second.millis()
                            && second.millis() < gone.getOrDefault(first.instance(), Long.MAX_VALUE)) {
                        twice.add(sequence);
                    }
                }
            }
        });
        return twice;
    }

    /**
     * Pulsar's Key_Shared invariant where the recording handler's holds make it visible: a key's messages are
     * unacknowledged at one consumer at a time (PIP-379). A call answered {@code retry_after} leaves its message
     * unacknowledged in its instance for {@code hold} (then it is negatively acknowledged), or until that instance is
     * {@code gone}; a call of the same key by another instance inside that time means two runtimes held the key at
     * once.
     */
    List<String> keyElsewhereDuringHold(LongFunction<String> keyOf, Duration hold, Map<String, Long> gone) {
        Map<String, List<Call>> byKey = new HashMap<>();
        calls.forEach(call -> byKey.computeIfAbsent(keyOf.apply(call.sequence()), k -> new ArrayList<>())
                .add(call));
        List<String> problems = new ArrayList<>();
        byKey.forEach((key, ofKey) -> {
            for (Call held : ofKey) {
                if (!held.outcome().equals("retry_after")) {
                    continue;
                }
                long end =
                        Math.min(held.millis() + hold.toMillis(), gone.getOrDefault(held.instance(), Long.MAX_VALUE));
                ofKey.stream()
                        .filter(other -> !other.instance().equals(held.instance())
                                && other.millis() >= held.millis()
                                && other.millis() < end)
                        .findFirst()
                        .ifPresent(other -> problems.add(key + ": " + other.sequence() + " handled by "
                                + other.instance() + " at " + other.millis() + " while " + held.instance()
                                + " held " + held.sequence() + " (from " + held.millis() + ")"));
            }
        });
        return problems;
    }

    /** The calls of each sequence acknowledged more than once, for a test's output. */
    List<List<Call>> duplicateCalls() {
        return bySequence.values().stream()
                .filter(ofSequence -> ofSequence.stream().filter(Call::acked).count() > 1)
                .toList();
    }

    /** Sequences acknowledged twice by one instance: a runtime that handed an acknowledged message over again. */
    long duplicatesWithinOneInstance() {
        return bySequence.keySet().stream()
                .filter(s -> acks(s).stream().map(Call::instance).distinct().count() < acks(s).size())
                .count();
    }

    /**
     * Per instance, the sequences it acknowledged first (the earliest acknowledgement recorded; on a tie, the instance
     * given first) that another instance, or it, acknowledged again.
     */
    Map<String, Long> duplicatesByFirstInstance() {
        return duplicatesByFirstInstance(Set.of());
    }

    /** As {@link #duplicatesByFirstInstance()}, leaving out the sequences in {@code except}. */
    Map<String, Long> duplicatesByFirstInstance(Set<Long> except) {
        Map<String, Long> counts = new LinkedHashMap<>();
        calls.stream().map(Call::instance).distinct().forEach(instance -> counts.put(instance, 0L));
        for (long sequence : bySequence.keySet()) {
            List<Call> acks = acks(sequence);
            if (acks.size() > 1 && !except.contains(sequence)) {
                Call first = acks.stream()
                        .min(Comparator.comparingLong(Call::millis))
                        .orElseThrow();
                counts.merge(first.instance(), 1L, Long::sum);
            }
        }
        return counts;
    }

    /**
     * Key order within one runtime: calls of {@code instance} that handled a sequence for the first time in that
     * instance, at attempt 1, after it had so handled a later sequence of the same key. Retries (attempt 2 on) and
     * copies of a sequence the instance had already seen are left out: Pulsar keeps no order for a negatively
     * acknowledged message (PIP-379), and a copy is a duplicate, counted as such.
     */
    List<String> outOfOrderWithin(String instance, LongFunction<String> keyOf) {
        Map<String, Long> last = new HashMap<>();
        Set<Long> seen = new HashSet<>();
        List<String> problems = new ArrayList<>();
        for (Call call : calls) {
            if (!call.instance().equals(instance) || !seen.add(call.sequence()) || call.attempt() != 1) {
                continue;
            }
            String key = keyOf.apply(call.sequence());
            Long before = last.put(key, Math.max(call.sequence(), last.getOrDefault(key, -1L)));
            if (before != null && before > call.sequence()) {
                problems.add(key + ": " + call.sequence() + " after " + before + " in " + instance);
            }
        }
        return problems;
    }

    /**
     * Key order across runtimes: the first call of each sequence anywhere, per key, that came after a call of a later
     * sequence of that key, earlier in the same instance's file or at an earlier millisecond in another instance
     * (calls of two instances at one millisecond are not ordered). On Key_Shared a key is unacknowledged at one
     * consumer at a time and moves only once its messages there are acknowledged or that consumer is gone, and the
     * messages a consumer gave back are dispatched before newer ones of their key (PIP-379): so the first handlings of
     * a key's messages, over all runtimes, follow the key's order.
     */
    List<String> outOfOrderAcross(LongFunction<String> keyOf) {
        Map<String, List<Call>> firstCallsByKey = new HashMap<>();
        for (List<Call> ofSequence : bySequence.values()) {
            Call first = ofSequence.stream()
                    .min(Comparator.comparingLong(Call::millis))
                    .orElseThrow();
            firstCallsByKey
                    .computeIfAbsent(keyOf.apply(first.sequence()), k -> new ArrayList<>())
                    .add(first);
        }
        List<String> problems = new ArrayList<>();
        firstCallsByKey.forEach((key, firsts) -> {
            firsts.sort(Comparator.comparingLong(Call::millis).thenComparingInt(Call::index));
            for (int i = 0; i < firsts.size(); i++) {
                Call call = firsts.get(i);
                for (int j = 0; j < i; j++) {
                    Call earlier = firsts.get(j);
                    boolean before = earlier.instance().equals(call.instance())
                            ? earlier.index() < call.index()
                            : earlier.millis() < call.millis();
                    if (before && earlier.sequence() > call.sequence()) {
                        problems.add(key + ": " + call.sequence() + " (" + call.instance() + ", " + call.millis()
                                + ") after " + earlier.sequence() + " (" + earlier.instance() + ", " + earlier.millis()
                                + ")");
                        break;
                    }
                }
            }
        });
        return problems;
    }

    /**
     * Sequences that reached the handler again after it had acknowledged them: a call recorded after the first
     * acknowledgement, later in the same instance's file or, in another instance, at the same millisecond or later.
     */
    long deliveredAfterAck() {
        return deliveredAfterAckCalls().size();
    }

    /**
     * The calls of each sequence counted by {@link #deliveredAfterAck()}, for the test's output: whether the repeats
     * were retried sequences seen twice at one attempt (the broker's double dispatch, docs/pulsar-client-notes.md) or
     * first deliveries, in which runtime, and how long apart, says where they came from.
     */
    List<List<Call>> deliveredAfterAckCalls() {
        List<List<Call>> repeated = new ArrayList<>();
        for (List<Call> ofSequence : bySequence.values()) {
            Call ack = ofSequence.stream().filter(Call::acked).findFirst().orElse(null);
            if (ack == null) {
                continue;
            }
            boolean again = ofSequence.stream()
                    .anyMatch(call -> call != ack
                            && (call.instance().equals(ack.instance())
                                    ? call.index() > ack.index()
                                    : call.millis() >= ack.millis()));
            if (again) {
                repeated.add(ofSequence);
            }
        }
        return repeated;
    }

    /** Acknowledgements {@code instance} recorded at {@code fromMillis} or later. */
    long acksSince(String instance, long fromMillis) {
        return calls.stream()
                .filter(call -> call.acked() && call.instance().equals(instance) && call.millis() >= fromMillis)
                .count();
    }
}
