package dev.settle.testbroker.standalone;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import org.apache.pulsar.common.api.proto.BaseCommand;
import org.apache.pulsar.common.api.proto.CommandAck;
import org.junit.jupiter.api.Test;

class CommandCounterTest {
    private final CommandCounter counter = new CommandCounter();

    @Test
    void countsEachFrameByTypeWithTheIdsPermitsAndMessagesItsCommandCarried() {
        counter.count(frame(ack(3)));
        counter.count(frame(ack(2)));
        counter.count(frame(flow(500)));
        counter.count(frame(redeliver(4)));
        counter.count(frame(send(10)));
        counter.count(frame(new BaseCommand().setType(BaseCommand.Type.PING)));

        assertThat(counter.get())
                .containsEntry("ACK", 2L)
                .containsEntry(CommandCounter.ACKED_IDS, 5L)
                .containsEntry("FLOW", 1L)
                .containsEntry(CommandCounter.PERMITS, 500L)
                .containsEntry("REDELIVER_UNACKNOWLEDGED_MESSAGES", 1L)
                .containsEntry(CommandCounter.REDELIVERED_IDS, 4L)
                .containsEntry("SEND", 1L)
                .containsEntry(CommandCounter.SENT_MESSAGES, 10L)
                .containsEntry("PING", 1L);
    }

    @Test
    void leavesTheFrameForTheBrokerAsItWas() {
        ByteBuf frame = frame(ack(3));
        int before = frame.readerIndex();

        counter.count(frame);

        assertThat(frame.readerIndex()).isEqualTo(before);
        assertThat(frame.readableBytes()).isEqualTo(frame.writerIndex() - before);
    }

    @Test
    void aFrameThatIsNoCommandCountsNothing() {
        counter.count(Unpooled.wrappedBuffer(new byte[] {0, 0, 0, 2, 0x12, 0x00}));
        counter.count(Unpooled.wrappedBuffer(new byte[] {0, 0, 0, 1}));

        assertThat(counter.get())
                .allSatisfy((name, count) -> assertThat(count).as(name).isZero());
    }

    @Test
    void countsTheEntriesDispatchedToConsumers() {
        counter.messageDispatched(null, null, 1, 1, null);
        counter.messageDispatched(null, null, 1, 2, null);

        assertThat(counter.get()).containsEntry(CommandCounter.DISPATCHED_ENTRIES, 2L);
    }

    @Test
    void listsNoCommandTypeItHasNotSeenButEveryCarriedFigure() {
        counter.count(frame(flow(1000)));

        assertThat(counter.get())
                .containsOnlyKeys(
                        "FLOW",
                        CommandCounter.ACKED_IDS,
                        CommandCounter.PERMITS,
                        CommandCounter.REDELIVERED_IDS,
                        CommandCounter.SENT_MESSAGES,
                        CommandCounter.DISPATCHED_ENTRIES);
    }

    @Test
    void theCarriedFiguresHaveTheNamesTheBenchmarksRead() {
        // dev.settle.benchmarks.BrokerCommands reads these names; it cannot see this class (the broker's loader).
        assertThat(CommandCounter.ACKED_IDS).isEqualTo("ACK ids");
        assertThat(CommandCounter.PERMITS).isEqualTo("FLOW permits");
        assertThat(CommandCounter.REDELIVERED_IDS).isEqualTo("REDELIVER ids");
        assertThat(CommandCounter.SENT_MESSAGES).isEqualTo("SEND messages");
        assertThat(CommandCounter.DISPATCHED_ENTRIES).isEqualTo("dispatched entries");
    }

    /** A frame as the broker's frame decoder passes it on: the command's size, then the command. */
    private static ByteBuf frame(BaseCommand command) {
        byte[] bytes = command.toByteArray();
        ByteBuf frame = Unpooled.wrappedBuffer(ByteBuffer.allocate(4 + bytes.length)
                .putInt(bytes.length)
                .put(bytes)
                .array());
        // As a pooled frame would be: some bytes before it already read.
        return Unpooled.wrappedBuffer(Unpooled.wrappedBuffer(new byte[] {7}), frame)
                .skipBytes(1);
    }

    private static BaseCommand ack(int ids) {
        BaseCommand command = new BaseCommand().setType(BaseCommand.Type.ACK);
        CommandAck ack = command.setAck().setConsumerId(1).setAckType(CommandAck.AckType.Individual);
        for (int i = 0; i < ids; i++) {
            ack.addMessageId().setLedgerId(1).setEntryId(i);
        }
        return command;
    }

    private static BaseCommand flow(int permits) {
        BaseCommand command = new BaseCommand().setType(BaseCommand.Type.FLOW);
        command.setFlow().setConsumerId(1).setMessagePermits(permits);
        return command;
    }

    private static BaseCommand redeliver(int ids) {
        BaseCommand command = new BaseCommand().setType(BaseCommand.Type.REDELIVER_UNACKNOWLEDGED_MESSAGES);
        var redeliver = command.setRedeliverUnacknowledgedMessages().setConsumerId(1);
        for (int i = 0; i < ids; i++) {
            redeliver.addMessageId().setLedgerId(1).setEntryId(i);
        }
        return command;
    }

    private static BaseCommand send(int messages) {
        BaseCommand command = new BaseCommand().setType(BaseCommand.Type.SEND);
        command.setSend().setProducerId(1).setSequenceId(1).setNumMessages(messages);
        return command;
    }
}
