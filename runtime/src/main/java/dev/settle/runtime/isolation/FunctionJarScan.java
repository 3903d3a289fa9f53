package dev.settle.runtime.isolation;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a function JAR's class files reference, read from their constant pools without loading a class: the
 * Pulsar Functions {@code Context} methods Settle does not serve (so {@code validate} names them before the first
 * message does), and whether the JAR bundles its own copy of the Functions or client API (ignored at run time: the
 * runtime's copy is loaded parent-first, see {@link ClassLoadingPolicy}).
 *
 * @param unsupported each unsupported method called, with the classes that call it, in JAR order
 * @param bundledApis the API packages the JAR carries class files of, such as {@code org.apache.pulsar.client.api}
 */
public record FunctionJarScan(List<Reference> unsupported, List<String> bundledApis) {

    /**
     * The {@code Context} (and {@code BaseContext}) methods Settle does not serve, each with what to use instead.
     * The function adapter throws {@link UnsupportedOperationException} from each, with the same advice; a test
     * holds the two to each other.
     */
    public static final Map<String, String> UNSUPPORTED = unsupportedMethods();

    private static final Set<String> CONTEXT_CLASSES =
            Set.of("org/apache/pulsar/functions/api/Context", "org/apache/pulsar/functions/api/BaseContext");
    private static final List<String> API_PACKAGES = List.of(
            "org/apache/pulsar/functions/api/", "org/apache/pulsar/client/api/", "org/apache/pulsar/common/schema/");

    /** One unsupported method and the classes calling it. */
    public record Reference(String method, List<String> callers) {
        /** What to use instead, from {@link #UNSUPPORTED}. */
        public String advice() {
            return UNSUPPORTED.get(method);
        }
    }

    public FunctionJarScan {
        unsupported = List.copyOf(unsupported);
        bundledApis = List.copyOf(bundledApis);
    }

    private static Map<String, String> unsupportedMethods() {
        Map<String, String> methods = new LinkedHashMap<>();
        String state = "Settle keeps no function state (there is no BookKeeper table service);"
                + " keep state in a store of your own (a database, a compacted topic)";
        for (String method : List.of(
                "getStateStore",
                "putState",
                "putStateAsync",
                "getState",
                "getStateAsync",
                "deleteState",
                "deleteStateAsync",
                "incrCounter",
                "incrCounterAsync",
                "getCounter",
                "getCounterAsync")) {
            methods.put(method, state);
        }
        methods.put(
                "getPulsarAdmin",
                "Settle runs without a function worker and gives functions no admin client;"
                        + " do administration outside the function");
        methods.put(
                "getPulsarClient",
                "publish with context.publish or context.newOutputMessage, which Settle acknowledges only once durable");
        methods.put(
                "getPulsarClientBuilder",
                "publish with context.publish or context.newOutputMessage, which Settle acknowledges only once durable");
        methods.put("newConsumerBuilder", "consume through the manifest: add a subscription with its own topics");
        methods.put("fatal", "throw an exception (a failure, retried and dead-lettered by the manifest's rules)");
        return Map.copyOf(methods);
    }

    /** Reads every class file of the JARs. */
    static FunctionJarScan of(List<Path> jars, JarLimits limits) throws IOException {
        Map<String, Set<String>> callers = new LinkedHashMap<>();
        Set<String> bundled = new TreeSet<>();
        for (Path jar : jars) {
            try (BoundedZip zip = BoundedZip.open(jar, limits)) {
                for (String name : zip.names()) {
                    if (!name.endsWith(".class") || name.startsWith("META-INF/")) {
                        continue;
                    }
                    for (String api : API_PACKAGES) {
                        if (name.startsWith(api)) {
                            bundled.add(api.substring(0, api.length() - 1).replace('/', '.'));
                        }
                    }
                    byte[] bytes = zip.read(name).orElse(null);
                    if (bytes == null) {
                        continue;
                    }
                    String caller =
                            name.substring(0, name.length() - ".class".length()).replace('/', '.');
                    for (String method : contextMethods(bytes)) {
                        callers.computeIfAbsent(method, m -> new LinkedHashSet<>())
                                .add(caller);
                    }
                }
            }
        }
        List<Reference> references = new ArrayList<>();
        callers.forEach((method, classes) -> references.add(new Reference(method, List.copyOf(classes))));
        return new FunctionJarScan(references, List.copyOf(bundled));
    }

    /**
     * The unsupported {@code Context} methods a class file's constant pool refers to: every call site compiles
     * to an {@code (Interface)Methodref} there, whatever the source looked like.
     */
    static Set<String> contextMethods(byte[] classFile) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(classFile));
        if (in.readInt() != 0xCAFEBABE) {
            return Set.of();
        }
        in.readUnsignedShort(); // minor
        in.readUnsignedShort(); // major
        int count = in.readUnsignedShort();
        String[] utf8 = new String[count];
        int[] classNameIndex = new int[count];
        int[][] methodRefs = new int[count][];
        int[] nameAndTypeName = new int[count];
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            switch (tag) {
                case 1 -> utf8[i] = in.readUTF();
                case 7 -> classNameIndex[i] = in.readUnsignedShort();
                case 8, 16, 19, 20 -> in.readUnsignedShort();
                case 3, 4 -> in.readInt();
                case 5, 6 -> {
                    in.readLong();
                    i++; // long and double take two slots
                }
                case 9 -> {
                    in.readUnsignedShort();
                    in.readUnsignedShort();
                }
                case 10, 11 -> methodRefs[i] = new int[] {in.readUnsignedShort(), in.readUnsignedShort()};
                case 12 -> {
                    nameAndTypeName[i] = in.readUnsignedShort();
                    in.readUnsignedShort();
                }
                case 15 -> {
                    in.readUnsignedByte();
                    in.readUnsignedShort();
                }
                case 17, 18 -> {
                    in.readUnsignedShort();
                    in.readUnsignedShort();
                }
                default -> throw new IOException("unknown constant pool tag " + tag);
            }
        }
        Set<String> found = new TreeSet<>();
        for (int[] ref : methodRefs) {
            if (ref == null) {
                continue;
            }
            String owner = utf8[classNameIndex[ref[0]]];
            String method = utf8[nameAndTypeName[ref[1]]];
            if (CONTEXT_CLASSES.contains(owner) && UNSUPPORTED.containsKey(method)) {
                found.add(method);
            }
        }
        return found;
    }
}
