package dev.settle.testbroker.standalone;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.intercept.BrokerInterceptor;
import org.apache.pulsar.broker.service.Consumer;
import org.apache.pulsar.broker.service.ServerCnx;
import org.apache.pulsar.common.api.proto.BaseCommand;

/**
 * Counts the commands clients send the broker, and the entries it dispatches to consumers, for the benchmarks' broker
 * commands per message (docs/benchmarks.md): what a consumer asks of the broker, shown in numbers. Read as a
 * {@link Supplier} of a map (JDK types only, so the harness outside the broker's class loader can read it): each
 * command type's count under its name ({@code ACK}, {@code FLOW}, {@code SEND}...), and under {@link #ACKED_IDS},
 * {@link #PERMITS}, {@link #REDELIVERED_IDS}, {@link #SENT_MESSAGES} and {@link #DISPATCHED_ENTRIES} what those commands
 * carried. Counts only grow; a reader takes the difference of two readings.
 *
 * <p>Pulsar 4.2.4 calls {@link #onPulsarCommand} for ten kinds of incoming command only (SEND, SUBSCRIBE, PRODUCER, the
 * lookups and schemas; not ACK, FLOW nor REDELIVER_UNACKNOWLEDGED_MESSAGES, read in {@code PulsarDecoder}) and for the
 * commands the broker sends itself, so the commands are counted below it: as each connection is made
 * ({@link #onConnectionCreated}) a handler goes into its Netty pipeline just before the connection's {@code ServerCnx}
 * and reads the type of every frame that passes. Only the frames whose figures are counted are parsed (a copy of their
 * command's bytes): the rest cost a varint read. The counters are an array slot per type and a {@link LongAdder} per
 * figure (the broker's I/O threads add at once).
 */
public final class CommandCounter implements BrokerInterceptor, Supplier<Map<String, Long>> {
    /** The message ids the ACK commands named (a grouped acknowledgement names several). */
    public static final String ACKED_IDS = "ACK ids";
    /** The messages the FLOW commands let the broker send. */
    public static final String PERMITS = "FLOW permits";
    /** The message ids the REDELIVER_UNACKNOWLEDGED_MESSAGES commands named (none: all of the consumer's unacked). */
    public static final String REDELIVERED_IDS = "REDELIVER ids";
    /** The messages the SEND commands carried (a batch is one SEND of several). */
    public static final String SENT_MESSAGES = "SEND messages";
    /** The entries the broker dispatched to consumers (a batch is one entry of several messages). */
    public static final String DISPATCHED_ENTRIES = "dispatched entries";

    /** The protobuf tag of {@code BaseCommand.type}: field 1, a varint. LightProto writes it first. */
    private static final int TYPE_TAG = 0x08;

    private static final BaseCommand.Type[] TYPES = BaseCommand.Type.values();

    private final AtomicLongArray commands;
    private final LongAdder ackedIds = new LongAdder();
    private final LongAdder permits = new LongAdder();
    private final LongAdder redeliveredIds = new LongAdder();
    private final LongAdder sentMessages = new LongAdder();
    private final LongAdder dispatchedEntries = new LongAdder();

    public CommandCounter() {
        int highest = 0;
        for (BaseCommand.Type type : TYPES) {
            highest = Math.max(highest, type.getValue());
        }
        commands = new AtomicLongArray(highest + 1);
    }

    /** Puts a {@link #count(ByteBuf) counting} handler into the new connection's pipeline, before its ServerCnx. */
    @Override
    public void onConnectionCreated(ServerCnx cnx) {
        ChannelHandlerContext handler = cnx.ctx();
        handler.pipeline().addBefore(handler.name(), "settle-command-counter", new Counting());
    }

    /**
     * Counts one frame as the broker receives it once its frame decoder has taken its total size off: the command's
     * size (4 bytes), the command, then a message's metadata and payload for a SEND. Leaves the frame as it was.
     */
    void count(ByteBuf frame) {
        int at = frame.readerIndex();
        if (frame.readableBytes() < 6
                || frame.getInt(at) > frame.readableBytes() - 4
                || frame.getUnsignedByte(at + 4) != TYPE_TAG) {
            return; // Not a command frame as Pulsar 4.2.4 writes them: nothing to count.
        }
        int type = 0;
        int shift = 0;
        int index = at + 5;
        int b;
        do {
            if (index >= frame.writerIndex() || shift > 28) {
                return;
            }
            b = frame.getUnsignedByte(index++);
            type |= (b & 0x7f) << shift;
            shift += 7;
        } while ((b & 0x80) != 0);
        if (type < 0 || type >= commands.length()) {
            return;
        }
        commands.incrementAndGet(type);
        if (type == BaseCommand.Type.ACK.getValue()
                || type == BaseCommand.Type.FLOW.getValue()
                || type == BaseCommand.Type.REDELIVER_UNACKNOWLEDGED_MESSAGES.getValue()
                || type == BaseCommand.Type.SEND.getValue()) {
            byte[] bytes = new byte[frame.getInt(at)];
            frame.getBytes(at + 4, bytes);
            BaseCommand command = new BaseCommand();
            command.parseFrom(bytes);
            carried(command);
        }
    }

    /** Adds what {@code command} carried: the ids of an ACK or a REDELIVER, a FLOW's permits, a SEND's messages. */
    void carried(BaseCommand command) {
        switch (command.getType()) {
            case ACK -> ackedIds.add(command.getAck().getMessageIdsCount());
            case FLOW -> permits.add(command.getFlow().getMessagePermits());
            case REDELIVER_UNACKNOWLEDGED_MESSAGES ->
                redeliveredIds.add(command.getRedeliverUnacknowledgedMessages().getMessageIdsCount());
            case SEND -> sentMessages.add(command.getSend().getNumMessages());
            default -> {}
        }
    }

    /** The counting handler of one connection; it only looks, and passes every frame on. */
    private final class Counting extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) {
            if (message instanceof ByteBuf frame) {
                try {
                    count(frame);
                } catch (RuntimeException e) {
                    // A frame this counter cannot read is the broker's to judge, never a reason to drop it.
                }
            }
            ctx.fireChannelRead(message);
        }
    }

    @Override
    public void messageDispatched(
            ServerCnx cnx, Consumer consumer, long ledgerId, long entryId, ByteBuf headersAndPayload) {
        dispatchedEntries.increment();
    }

    /** Every count so far: the command types seen (by name), then the figures named by this class's constants. */
    @Override
    public Map<String, Long> get() {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (BaseCommand.Type type : TYPES) {
            long count = commands.get(type.getValue());
            if (count > 0) {
                counts.put(type.name(), count);
            }
        }
        counts.put(ACKED_IDS, ackedIds.sum());
        counts.put(PERMITS, permits.sum());
        counts.put(REDELIVERED_IDS, redeliveredIds.sum());
        counts.put(SENT_MESSAGES, sentMessages.sum());
        counts.put(DISPATCHED_ENTRIES, dispatchedEntries.sum());
        return counts;
    }

    @Override
    public void onPulsarCommand(BaseCommand command, ServerCnx cnx) {
        // Counted in the pipeline instead: see the class comment.
    }

    @Override
    public void onConnectionClosed(ServerCnx cnx) {
        // Nothing to count.
    }

    @Override
    public void onWebserviceRequest(ServletRequest request) {
        // Only the binary protocol's commands are counted.
    }

    @Override
    public void onWebserviceResponse(ServletRequest request, ServletResponse response) {
        // Only the binary protocol's commands are counted.
    }

    @Override
    public void initialize(PulsarService pulsarService) {
        // Installed on a running broker (BrokerService.setInterceptor), not loaded from broker.conf.
    }

    @Override
    public void close() {
        // Holds nothing.
    }
}
