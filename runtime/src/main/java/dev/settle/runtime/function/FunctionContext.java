package dev.settle.runtime.function;

import dev.settle.runtime.isolation.FunctionJarScan;
import dev.settle.runtime.publish.Outputs;
import dev.settle.runtime.publish.Publishes;
import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.pulsar.client.admin.PulsarAdmin;
import org.apache.pulsar.client.api.ClientBuilder;
import org.apache.pulsar.client.api.ConsumerBuilder;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.apache.pulsar.client.api.TypedMessageBuilder;
import org.apache.pulsar.functions.api.Context;
import org.apache.pulsar.functions.api.Record;
import org.apache.pulsar.functions.api.StateStore;
import org.apache.pulsar.functions.api.utils.FunctionRecord;
import org.slf4j.Logger;

/**
 * The {@code Context} a function is called with: one per call, so {@link #getCurrentRecord()} and every publish
 * belong to the message being handled, whichever thread the function uses; the one given to {@code initialize} has
 * no current record, and what it publishes is sent without holding any input back.
 *
 * <p>State is served from a compacted topic when the manifest keeps one ({@link FunctionState}). What Settle cannot
 * serve (state when the manifest keeps none, an admin or raw client, more consumers) throws
 * {@link UnsupportedOperationException} naming the method and what to use instead; {@code settle validate} lists the
 * calls ahead of time ({@link FunctionJarScan#UNSUPPORTED}).
 */
final class FunctionContext implements Context {

    /** What every call of one subscription's function shares. */
    record Setup(
            String subscription,
            List<String> inputTopics,
            Optional<String> outputTopic,
            String outputSchemaType,
            Map<String, Object> userConfig,
            Map<String, String> secrets,
            Function<String, String> environment,
            Logger logger,
            MetricSink metrics,
            Outputs outputs,
            String version,
            int instanceId,
            int numInstances,
            FunctionState state) {}

    /** Where {@code recordMetric} goes. */
    @FunctionalInterface
    interface MetricSink {
        void record(String name, double value);
    }

    private final Setup setup;
    private final InputRecord record;
    private final Publishes publishes;
    private volatile Throwable fatal;

    /** @param record the current record, null at {@code initialize}; @param publishes null likewise */
    FunctionContext(Setup setup, InputRecord record, Publishes publishes) {
        this.setup = setup;
        this.record = record;
        this.publishes = publishes;
    }

    @Override
    public Collection<String> getInputTopics() {
        return setup.inputTopics();
    }

    @Override
    public String getOutputTopic() {
        return setup.outputTopic().orElse(null);
    }

    @Override
    public Record<?> getCurrentRecord() {
        if (record == null) {
            throw new IllegalStateException("no current record: initialize is called before any message");
        }
        return record;
    }

    @Override
    public String getOutputSchemaType() {
        return setup.outputSchemaType();
    }

    /** The subscription's name: Settle has no function names of its own. */
    @Override
    public String getFunctionName() {
        return setup.subscription();
    }

    @Override
    public String getFunctionId() {
        return setup.subscription();
    }

    @Override
    public String getFunctionVersion() {
        return setup.version();
    }

    @Override
    public Map<String, Object> getUserConfigMap() {
        return setup.userConfig();
    }

    @Override
    public Optional<Object> getUserConfigValue(String key) {
        return Optional.ofNullable(setup.userConfig().get(key));
    }

    @Override
    public Object getUserConfigValueOrDefault(String key, Object defaultValue) {
        return setup.userConfig().getOrDefault(key, defaultValue);
    }

    @Override
    public String getTenant() {
        return namePart(0);
    }

    @Override
    public String getNamespace() {
        return namePart(0) + "/" + namePart(1);
    }

    /** Tenant (0) or namespace (1) of the first consumed topic. */
    private String namePart(int index) {
        if (setup.inputTopics().isEmpty()) {
            return null;
        }
        String topic = setup.inputTopics().get(0);
        int scheme = topic.indexOf("://");
        String[] parts = topic.substring(scheme < 0 ? 0 : scheme + 3).split("/");
        return parts.length > index ? parts[index] : null;
    }

    /**
     * The manifest's {@code instanceId} (default 0): several runtimes on one Shared subscription do not know of each
     * other, so the deployment says which one this is (a StatefulSet's ordinal through {@code ${...}}).
     */
    @Override
    public int getInstanceId() {
        return setup.instanceId();
    }

    /** The manifest's {@code numInstances} (default 1). */
    @Override
    public int getNumInstances() {
        return setup.numInstances();
    }

    @Override
    public Logger getLogger() {
        return setup.logger();
    }

    /** The environment variable the manifest's {@code secrets} names for it; null when none is named or set. */
    @Override
    public String getSecret(String secretName) {
        String variable = setup.secrets().get(secretName);
        return variable == null ? null : setup.environment().apply(variable);
    }

    @Override
    public void recordMetric(String metricName, double value) {
        setup.metrics().record(metricName, value);
    }

    @Override
    public <X> CompletableFuture<Void> publish(String topicName, X object, String schemaOrSerdeClassName) {
        return publish(topicName, object);
    }

    /**
     * Publishes with the schema of the value's class ({@code String} as STRING, {@code byte[]} as BYTES, else JSON);
     * the input is acknowledged only once this send is durable.
     */
    @Override
    @SuppressWarnings("unchecked")
    public <X> CompletableFuture<Void> publish(String topicName, X object) {
        try {
            Schema<X> schema = (Schema<X>) OutputSchemas.forValue(object);
            return newOutputMessage(topicName, schema).value(object).sendAsync().thenApply(id -> null);
        } catch (PulsarClientException | RuntimeException e) {
            CompletableFuture<Void> failed = CompletableFuture.failedFuture(e);
            if (publishes != null) {
                publishes.add(failed.thenApply(none -> null));
            }
            return failed;
        }
    }

    @Override
    public <X> TypedMessageBuilder<X> newOutputMessage(String topicName, Schema<X> schema)
            throws PulsarClientException {
        if (publishes == null) {
            return setup.outputs().newMessage(topicName, schema);
        }
        try {
            return publishes.newMessage(topicName, schema);
        } catch (PulsarClientException | RuntimeException e) {
            // No producer: this delivery must not be acknowledged even if the function catches the exception.
            publishes.add(CompletableFuture.failedFuture(e));
            throw e;
        }
    }

    @Override
    public <X> FunctionRecord.FunctionRecordBuilder<X> newOutputRecordBuilder(Schema<X> schema) {
        return FunctionRecord.from(this, schema);
    }

    @Override
    public <X> ConsumerBuilder<X> newConsumerBuilder(Schema<X> schema) {
        throw unsupported("newConsumerBuilder");
    }

    @Override
    public PulsarAdmin getPulsarAdmin() {
        throw unsupported("getPulsarAdmin");
    }

    @Override
    public PulsarClient getPulsarClient() {
        throw unsupported("getPulsarClient");
    }

    @Override
    public ClientBuilder getPulsarClientBuilder() {
        throw unsupported("getPulsarClientBuilder");
    }

    /**
     * Recorded; once the call is over the runtime stops as on its own fatal path (every subscription stopped, exit
     * code 70 for a restart), and the message is not acknowledged.
     */
    @Override
    public void fatal(Throwable t) {
        fatal = t == null ? new IllegalStateException("context.fatal(null)") : t;
    }

    /** What {@link #fatal} was called with, or null. */
    Throwable fatal() {
        return fatal;
    }

    @Override
    public <X extends StateStore> X getStateStore(String name) {
        throw unsupported("getStateStore");
    }

    @Override
    public <X extends StateStore> X getStateStore(String tenant, String ns, String name) {
        throw unsupported("getStateStore");
    }

    @Override
    public void putState(String key, ByteBuffer value) {
        state("putState").put(key, value, publishes, setup.outputs());
    }

    @Override
    public CompletableFuture<Void> putStateAsync(String key, ByteBuffer value) {
        return state("putStateAsync").put(key, value, publishes, setup.outputs());
    }

    @Override
    public ByteBuffer getState(String key) {
        return state("getState").get(key);
    }

    @Override
    public CompletableFuture<ByteBuffer> getStateAsync(String key) {
        return CompletableFuture.completedFuture(state("getStateAsync").get(key));
    }

    @Override
    public void deleteState(String key) {
        state("deleteState").put(key, null, publishes, setup.outputs());
    }

    @Override
    public CompletableFuture<Void> deleteStateAsync(String key) {
        return state("deleteStateAsync").put(key, null, publishes, setup.outputs());
    }

    @Override
    public void incrCounter(String key, long amount) {
        state("incrCounter").increment(key, amount, publishes, setup.outputs());
    }

    @Override
    public CompletableFuture<Void> incrCounterAsync(String key, long amount) {
        return state("incrCounterAsync").increment(key, amount, publishes, setup.outputs());
    }

    @Override
    public long getCounter(String key) {
        return state("getCounter").counter(key);
    }

    @Override
    public CompletableFuture<Long> getCounterAsync(String key) {
        return CompletableFuture.completedFuture(state("getCounterAsync").counter(key));
    }

    /** The function's state, when the manifest keeps one ({@code state:}). */
    private FunctionState state(String method) {
        if (setup.state() == null) {
            throw unsupported(method);
        }
        return setup.state();
    }

    private static UnsupportedOperationException unsupported(String method) {
        return new UnsupportedOperationException(
                "Context." + method + " is not supported by Settle: " + FunctionJarScan.UNSUPPORTED.get(method));
    }
}
