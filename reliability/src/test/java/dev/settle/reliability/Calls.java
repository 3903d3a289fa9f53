package dev.settle.reliability;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

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
            for (String line : Files.readAllLines(file.getValue(), StandardCharsets.US_ASCII)) {
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

    /** Sequences acknowledged twice by one instance: a runtime that handed an acknowledged message over again. */
    long duplicatesWithinOneInstance() {
        return bySequence.keySet().stream()
                .filter(s -> acks(s).stream().map(Call::instance).distinct().count() < acks(s).size())
                .count();
    }

    /** Per instance, the sequences it acknowledged first that a later instance acknowledged again. */
    Map<String, Long> duplicatesByFirstInstance() {
        Map<String, Long> counts = new LinkedHashMap<>();
        calls.stream().map(Call::instance).distinct().forEach(instance -> counts.put(instance, 0L));
        for (long sequence : bySequence.keySet()) {
            List<Call> acks = acks(sequence);
            if (acks.size() > 1) {
                counts.merge(acks.get(0).instance(), 1L, Long::sum);
            }
        }
        return counts;
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
