package dev.settle.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code settle trace}'s refusals, before any broker is asked, and its JSON escaping. */
class TraceCommandTest {
    private final SettleCommand settle = new SettleCommand();

    private static Path manifest(Path folder, String journal) throws Exception {
        return Files.writeString(folder.resolve("settle.yaml"), """
                pulsar:
                  serviceUrl: pulsar://localhost:1
                subscriptions:
                  - name: orders
                    topics: [persistent://public/default/orders]
                    jar: not-built-yet.jar
                %s
                """.formatted(journal));
    }

    @Test
    void aTraceMustSayWhichMessageOnceOnly(@TempDir Path folder) throws Exception {
        Path manifest = manifest(folder, "    journal: true");

        assertThat(settle.run("trace", manifest.toString(), "orders")).isEqualTo(Main.USAGE);
        assertThat(settle.err()).contains("say which message: a MESSAGE-ID, --key K or --payload-sha S");
        assertThat(settle.run("trace", manifest.toString(), "orders", "1:2:-1", "--key", "k"))
                .isEqualTo(Main.USAGE);
        assertThat(settle.run("trace", manifest.toString(), "orders", "1:2:-1", "--follow"))
                .isEqualTo(Main.USAGE);
        assertThat(settle.err()).contains("--follow needs --key K");
    }

    @Test
    void aSubscriptionWithoutAJournalIsToldHowToKeepOne(@TempDir Path folder) throws Exception {
        Path manifest = manifest(folder, "");

        assertThat(settle.run("trace", manifest.toString(), "orders", "1:2:-1")).isEqualTo(Main.USAGE);
        assertThat(settle.err()).contains("keeps no journal; add journal: true to it");
    }

    @Test
    void theJsonFormWritesControlAndFormatCharactersOut() {
        assertThat(TraceCommand.quote("a\u001b[2J\"\\\u202eb\n")).isEqualTo("\"a\\u001b[2J\\\"\\\\\\u202eb\\u000a\"");
    }

    @Test
    void theJsonFormShowsEachRecordsJournalFormatAsItsMessageSaidIt() {
        dev.settle.runtime.journal.JournalRecord record = new dev.settle.runtime.journal.JournalRecord(
                1_000L,
                "orders",
                "t",
                "1:2:-1",
                "t@1:2:-1",
                null,
                1,
                null,
                0,
                null,
                "ack",
                null,
                null,
                null,
                0,
                null,
                null,
                null);
        java.util.Map<dev.settle.runtime.journal.JournalRecord, String> formats = java.util.Map.of(record, "3");

        String json = TraceCommand.json(dev.settle.runtime.journal.Story.of(
                "t@1:2:-1", java.util.List.of(record), java.util.List.of(), formats::get));

        // Not the first format's "1" that a record's properties name: the format of the message it was read from.
        assertThat(json).contains("\"kind\":\"handled\",\"settle.journal\":\"3\",\"at\":\"1000\"");
    }
}
