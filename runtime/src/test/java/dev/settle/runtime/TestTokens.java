package dev.settle.runtime;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HS256 JSON web tokens as {@code pulsar tokens create --secret-key} makes them, signed with the JDK: the broker's
 * {@code AuthenticationProviderToken} takes the {@code sub} claim as the role and refuses a token past {@code exp}.
 */
final class TestTokens {
    private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

    private final byte[] secretKey;

    private TestTokens(byte[] secretKey) {
        this.secretKey = secretKey;
    }

    /** A fresh 256-bit key: the least HS256 allows. */
    static TestTokens withNewKey() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return new TestTokens(key);
    }

    /** The key as the broker's {@code tokenSecretKey} property takes it. */
    String brokerSecretKey() {
        return "data:;base64," + Base64.getEncoder().encodeToString(secretKey);
    }

    String token(String role, Optional<Instant> expires) {
        String header = encode("{\"alg\":\"HS256\"}");
        String payload = encode("{\"sub\":\"" + role + "\""
                + expires.map(at -> ",\"exp\":" + at.getEpochSecond()).orElse("") + "}");
        String signed = header + "." + payload;
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secretKey, "HmacSHA256"));
            return signed + "." + BASE64URL.encodeToString(mac.doFinal(signed.getBytes(StandardCharsets.US_ASCII)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    private static String encode(String json) {
        return BASE64URL.encodeToString(json.getBytes(StandardCharsets.UTF_8));
    }
}
