package dev.settle.runtime.driver;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test-only hook that halts the process at one point of an exactly-once commit (ExactlyOnceKillIT forces its kill
 * points with it): off unless the system property {@code settle.test.haltAt} is {@code <point>:<n>:<marker file>},
 * where the point is {@code after-ack} (the input is acknowledged in its transaction, the commit not asked for) or
 * {@code during-commit} (the commit asked for, its answer not received). The transaction holding the {@code n}-th
 * delivery to reach the point creates the marker file and halts the process as a SIGKILL would (no shutdown hooks, nothing flushed); once the
 * marker exists, the hook does nothing, so the restarted runtime runs on.
 */
final class KillPoint {
    static final String PROPERTY = "settle.test.haltAt";

    /** Null unless the property is set: the hook then costs one read of a constant. */
    private static final KillPoint CONFIGURED = parse(System.getProperty(PROPERTY));

    private final String point;
    private final int nth;
    private final Path marker;
    private final AtomicInteger reached = new AtomicInteger();

    private KillPoint(String point, int nth, Path marker) {
        this.point = point;
        this.nth = nth;
        this.marker = marker;
    }

    /**
     * The {@code after-ack} point: the inputs of {@code deliveries} deliveries are acknowledged in their transaction,
     * the commit not asked for yet.
     */
    static void afterAck(int deliveries) {
        if (CONFIGURED != null) {
            CONFIGURED.reach("after-ack", deliveries);
        }
    }

    /** The {@code during-commit} point for {@code deliveries}: the commit was asked for, its answer has not come. */
    static void duringCommit(int deliveries) {
        if (CONFIGURED != null) {
            CONFIGURED.reach("during-commit", deliveries);
        }
    }

    /** Halts at the transaction that holds the {@code nth} delivery to reach {@code at}. */
    private void reach(String at, int deliveries) {
        if (!point.equals(at)) {
            return;
        }
        int before = reached.getAndAdd(deliveries);
        if (before >= nth || before + deliveries < nth) {
            return;
        }
        try {
            Files.createFile(marker);
        } catch (FileAlreadyExistsException once) {
            return;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Runtime.getRuntime().halt(137);
    }

    static KillPoint parse(String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String[] parts = value.split(":", 3);
        if (parts.length != 3
                || !(parts[0].equals("after-ack") || parts[0].equals("during-commit"))
                || !parts[1].matches("[1-9][0-9]*")) {
            throw new IllegalArgumentException(
                    "-D" + PROPERTY + " must be after-ack|during-commit:<n>:<marker file>," + " was '" + value + "'");
        }
        return new KillPoint(parts[0].toLowerCase(Locale.ROOT), Integer.parseInt(parts[1]), Path.of(parts[2]));
    }
}
