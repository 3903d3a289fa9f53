package dev.settle.runtime;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A test CA, a broker certificate for 127.0.0.1 and a client certificate, all made at test time with the JDK's
 * {@code keytool} (three runs, about 2 s): no certificate library on the class path, and no files checked in that
 * could expire. Keys are written as PKCS#8 PEM, the form both the broker and the client read.
 *
 * @param ca the CA's certificate, PEM: what both sides trust
 * @param brokerCert the broker's certificate, signed by the CA, for 127.0.0.1 and localhost
 * @param brokerKey the broker's private key
 * @param clientCert the client's certificate, signed by the CA; its common name is the role
 * @param clientKey the client's private key
 */
record TestCertificates(Path ca, Path brokerCert, Path brokerKey, Path clientCert, Path clientKey) {
    private static final String PASSWORD = "settle-test";

    static TestCertificates create(Path folder, String clientRole) throws IOException, GeneralSecurityException {
        // One key store for all three: keytool signs with -signer only from the store it writes to. Three keytool
        // runs; the PEM files are written from the store here, which saves three more.
        Path store = folder.resolve("test.p12");
        keyPair(folder, store, "ca", "CN=settle-test-ca", "-ext", "bc:c");
        // The broker is reached as 127.0.0.1, and its lookups answer with localhost: both names are on it.
        keyPair(
                folder,
                store,
                "broker",
                "CN=127.0.0.1",
                "-signer",
                "ca",
                "-ext",
                "san=ip:127.0.0.1,dns:localhost",
                "-ext",
                "eku=serverAuth,clientAuth");
        keyPair(folder, store, "client", "CN=" + clientRole, "-signer", "ca", "-ext", "eku=clientAuth");
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, PASSWORD.toCharArray());
        }
        return new TestCertificates(
                certificate(folder, keys, "ca"),
                certificate(folder, keys, "broker"),
                privateKey(folder, keys, "broker"),
                certificate(folder, keys, "client"),
                privateKey(folder, keys, "client"));
    }

    /** An RSA 2048 key pair with a certificate valid for two days, in {@code store} under {@code alias}. */
    private static void keyPair(Path folder, Path store, String alias, String name, String... more) throws IOException {
        List<String> arguments = new ArrayList<>(List.of(
                "-genkeypair",
                "-alias",
                alias,
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-validity",
                "2",
                "-dname",
                name));
        arguments.addAll(List.of(more));
        arguments.addAll(List.of("-keystore", store.toString()));
        keytool(folder, arguments.toArray(String[]::new));
    }

    private static Path certificate(Path folder, KeyStore keys, String alias)
            throws IOException, GeneralSecurityException {
        return pem(
                folder.resolve(alias + ".pem"),
                "CERTIFICATE",
                keys.getCertificate(alias).getEncoded());
    }

    /** PKCS#8, as {@code Key.getEncoded()} gives an RSA private key. */
    private static Path privateKey(Path folder, KeyStore keys, String alias)
            throws IOException, GeneralSecurityException {
        Key key = keys.getKey(alias, PASSWORD.toCharArray());
        return pem(folder.resolve(alias + "-key.pem"), "PRIVATE KEY", key.getEncoded());
    }

    private static Path pem(Path file, String type, byte[] der) throws IOException {
        return Files.writeString(
                file,
                "-----BEGIN " + type + "-----\n"
                        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                                .encodeToString(der)
                        + "\n-----END " + type + "-----\n");
    }

    private static void keytool(Path folder, String... arguments) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(arguments));
        command.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD, "-keypass", PASSWORD, "-noprompt"));
        if (List.of(arguments).contains("-signer")) {
            command.addAll(List.of("-signerkeypass", PASSWORD));
        }
        Process process = new ProcessBuilder(command)
                .directory(folder.toFile())
                .redirectErrorStream(true)
                .start();
        try {
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IOException("keytool " + String.join(" ", arguments) + " failed: " + output);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while keytool ran", e);
        }
    }
}
