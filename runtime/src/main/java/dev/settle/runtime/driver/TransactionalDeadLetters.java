package dev.settle.runtime.driver;

import java.util.Map;
import java.util.concurrent.CompletionStage;
import org.apache.pulsar.client.api.Message;

/**
 * The dead letters of an exactly-once subscription (docs/exactly-once.md): each is sent in a transaction of its own
 * together with the acknowledgement of its input, so a crash or a failure between the two never writes a letter
 * twice nor loses one. A transaction of its own, not the failed attempt's: that one is aborted, so that none of the
 * attempt's outputs is ever read, and the letter and acknowledgement must not go down with them.
 */
final class TransactionalDeadLetters implements DeadLetterWriter<Message<?>> {
    private final DeadLetterWriter<Message<?>> letters;
    private final CommitStage commits;

    /** @param letters sends each letter in the transaction its unit of work carries */
    TransactionalDeadLetters(DeadLetterWriter<Message<?>> letters, CommitStage commits) {
        this.letters = letters;
        this.commits = commits;
    }

    @Override
    public CompletionStage<?> write(UnitOfWork<Message<?>> work, Map<String, String> settleProperties) {
        return commits.commitLetter(work, inTransaction -> letters.write(inTransaction, settleProperties));
    }

    @Override
    public boolean acknowledgesOriginal() {
        return true;
    }
}
