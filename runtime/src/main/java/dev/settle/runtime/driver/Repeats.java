package dev.settle.runtime.driver;

import org.apache.pulsar.client.api.Message;

/**
 * The door of the message path, before its slots: what keeps a broker's repeat of a copy in hand or acknowledged from
 * the handler ({@link DuplicateGuard}, on Shared and Key_Shared). On Exclusive and Failover, where one consumer reads
 * each topic and the broker's repeat was never seen, it is {@link #NONE}: every copy is handled. The door is also the
 * dead letters' {@link DeadLettering.LetterWatch}: it holds back the twin of a copy being dead-lettered (issue 41).
 */
interface Repeats extends DeadLettering.LetterWatch<Message<?>> {
    /** Lets every copy through and remembers nothing. */
    Repeats NONE = new Repeats() {
        @Override
        public DuplicateGuard.Verdict admit(Message<?> message) {
            return DuplicateGuard.Verdict.HANDLE;
        }

        @Override
        public boolean twinAcknowledged(Message<?> message) {
            return false;
        }

        @Override
        public void settlesLater(Message<?> message) {}

        @Override
        public void finished(Message<?> message, boolean acknowledged, boolean settledLater) {}

        @Override
        public void lettering(Message<?> message) {}

        @Override
        public void lettered(Message<?> message, boolean acknowledged) {}

        @Override
        public String toString() {
            return "none";
        }
    };

    /** Decides about a received copy; {@link DuplicateGuard.Verdict#HANDLE} must be followed by {@link #finished}. */
    DuplicateGuard.Verdict admit(Message<?> message);

    /** Whether a copy with this one's id and redelivery count was acknowledged; takes nothing in hand. */
    boolean twinAcknowledged(Message<?> message);

    /** The handled copy will be settled after its call gave its permit back (it waits for its outputs or commit). */
    void settlesLater(Message<?> message);

    /** The handled copy is settled; {@code acknowledged} when that settlement acknowledged it. */
    void finished(Message<?> message, boolean acknowledged, boolean settledLater);
}
