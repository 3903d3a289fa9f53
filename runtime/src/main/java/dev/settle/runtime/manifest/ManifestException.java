package dev.settle.runtime.manifest;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A manifest that was refused, with every problem found, one per line.
 *
 * <p><b>Supported API</b>: kept stable across releases (docs/design.md, "The supported API"), as
 * {@code SettleTestDriver.fromManifest} throws it.
 */
public final class ManifestException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient List<Problem> problems;

    public ManifestException(List<Problem> problems) {
        super(problems.stream().map(Problem::toString).collect(Collectors.joining("\n")));
        this.problems = List.copyOf(problems);
    }

    public List<Problem> problems() {
        return problems;
    }
}
