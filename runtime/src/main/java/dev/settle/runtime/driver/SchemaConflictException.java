package dev.settle.runtime.driver;

import dev.settle.runtime.manifest.SubscriptionSpec;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;

/**
 * The broker refused the subscription because the topic's schema does not fit the one the handler's messages are
 * read with: a configuration problem, not a connection failure, and no retry changes it. It stays an
 * {@link PulsarClientException.IncompatibleSchemaException}, so code that tells the client's errors apart by type
 * treats it as the client does.
 */
public final class SchemaConflictException extends PulsarClientException.IncompatibleSchemaException {
    private static final long serialVersionUID = 1L;
    /** The broker's message inside the client's JSON wrapping ({@link #brokerMessage}). */
    private static final Pattern ERROR_MESSAGE = Pattern.compile("\"errorMsg\":\"((?:[^\"\\\\]|\\\\.)*)\"");

    private SchemaConflictException(String message, Throwable cause) {
        super(message);
        initCause(cause);
    }

    /** Names the subscription, its topics, the broker's words (which name the topic's schema) and the fixes. */
    static SchemaConflictException of(
            SubscriptionSpec spec, Schema<?> schema, PulsarClientException.IncompatibleSchemaException refused) {
        String ours = String.valueOf(schema.getSchemaInfo().getType());
        return new SchemaConflictException(
                "schema conflict: subscription '" + spec.name() + "' on " + spec.topics()
                        + " reads messages as " + ours + ", and the broker refused it: '" + brokerMessage(refused)
                        + "'. Publish to the topic with a schema that matches, change 'schema:' on the subscription (left"
                        + " out, a String handler registers no schema and reads any topic as UTF-8), or take byte[] in the"
                        + " handler to read payloads as published",
                refused);
    }

    /**
     * The broker's own words: the client wraps them in JSON with its request id and addresses, e.g.
     * {@code {"errorMsg":"Incompatible schema: exists schema type STRING, new schema type JSON","reqId":...}}.
     */
    static String brokerMessage(PulsarClientException refused) {
        String message = String.valueOf(refused.getMessage()).strip();
        Matcher errorMessage = ERROR_MESSAGE.matcher(message);
        return errorMessage.find() ? errorMessage.group(1).replace("\\\"", "\"") : message;
    }
}
