package dev.settle.runtime.cli;

import dev.settle.runtime.manifest.Location;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.Problem;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code validate --env-file FILE}: the variables a deployment will set, for {@code ${VAR}} and
 * {@code token: {env: VAR}} in a manifest checked elsewhere. One {@code NAME=value} a line, as Docker's
 * {@code --env-file} reads it: the value is everything after the first {@code =}, as written (quotes are kept);
 * blank lines and lines starting with {@code #} are skipped.
 */
final class EnvFile {
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private EnvFile() {}

    /**
     * The process environment with the file's variables over it.
     *
     * @throws ManifestException naming each line that is not {@code NAME=value}
     */
    static Map<String, String> over(Map<String, String> environment, Path file) throws IOException, ManifestException {
        Map<String, String> merged = new LinkedHashMap<>(environment);
        List<Problem> problems = new ArrayList<>();
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank() || line.stripLeading().startsWith("#")) {
                continue;
            }
            int equals = line.indexOf('=');
            String name = equals < 0 ? line.strip() : line.substring(0, equals).strip();
            if (equals < 0 || !NAME.matcher(name).matches()) {
                problems.add(new Problem(
                        new Location(file, i + 1, 1),
                        "(env file)",
                        "must be NAME=value, was '" + line.strip()
                                + "'; a name is letters, digits and _, and # starts a comment line"));
                continue;
            }
            merged.put(name, line.substring(equals + 1));
        }
        if (!problems.isEmpty()) {
            throw new ManifestException(problems);
        }
        return merged;
    }
}
