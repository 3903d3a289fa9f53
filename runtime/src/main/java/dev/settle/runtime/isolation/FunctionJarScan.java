package dev.settle.runtime.isolation;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a function can reach in its JAR, read from constant pools without loading a class: the Pulsar Functions
 * {@code Context} methods Settle does not serve that its class or a class it reaches calls (so {@code validate}
 * names them before the first message does), and whether the JAR bundles its own copy of the Functions or client API (ignored at run time: the
 * runtime's copy is loaded parent-first, see {@link ClassLoadingPolicy}).
 *
 * @param unsupported each unsupported method called, with the classes that call it, in the order they were reached
 * @param bundledApis the API packages the JAR carries class files of, such as {@code org.apache.pulsar.client.api}
 */
public record FunctionJarScan(List<Reference> unsupported, List<String> bundledApis) {

    /** The state methods, in the order {@link #UNSUPPORTED} lists them; declared first, as it is made from them. */
    private static final List<String> STATE_METHODS = List.of(
            "putState",
            "putStateAsync",
            "getState",
            "getStateAsync",
            "deleteState",
            "deleteStateAsync",
            "incrCounter",
            "incrCounterAsync",
            "getCounter",
            "getCounterAsync");

    /**
     * The {@code Context} (and {@code BaseContext}) methods Settle does not serve, each with what to use instead.
     * The function adapter throws {@link UnsupportedOperationException} from each, with the same advice; a test
     * holds the two to each other.
     */
    public static final Map<String, String> UNSUPPORTED = unsupportedMethods();

    /** The methods of {@link #UNSUPPORTED} that a subscription keeping state ({@code state:}) serves. */
    public static final Set<String> STATE = Set.copyOf(STATE_METHODS);

    private static final Set<String> CONTEXT_CLASSES =
            Set.of("org/apache/pulsar/functions/api/Context", "org/apache/pulsar/functions/api/BaseContext");
    private static final List<String> API_PACKAGES = List.of(
            "org/apache/pulsar/functions/api/", "org/apache/pulsar/client/api/", "org/apache/pulsar/common/schema/");

    /**
     * One unsupported method and the classes calling it.
     *
     * @param certain whether the function's own class calls it; otherwise a class the function reaches does, and
     *     whether that call happens depends on the code path
     */
    public record Reference(String method, List<String> callers, boolean certain) {
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
        String state = "this subscription keeps no function state; add 'state: true' to it in the manifest to keep"
                + " state in a compacted topic (there is no BookKeeper table service)";
        methods.put(
                "getStateStore",
                "Settle keeps state in a compacted topic, not in named state stores; use putState, getState,"
                        + " incrCounter and getCounter with 'state: true' in the manifest");
        for (String method : STATE_METHODS) {
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
        return Map.copyOf(methods);
    }

    /**
     * Follows what {@code root} can reach inside the JARs: its class, and transitively every class of the JARs
     * that a reached class's constant pool names (superclasses, interfaces, owners of calls and fields, classes
     * instantiated or cast to). Classes of the JARs no reached class names are not read, so a JAR holding several
     * functions, or bundling the Functions runtime, is judged by the one function named. What is reached by
     * reflection ({@code Class.forName} with a computed name) is not followed; the runtime still throws if it
     * calls an unsupported method.
     *
     * @param root the function's class name, such as {@code com.acme.WordCount}
     */
    static FunctionJarScan of(List<Path> jars, JarLimits limits, String root) throws IOException {
        List<BoundedZip> zips = new ArrayList<>();
        try {
            Set<String> bundled = new TreeSet<>();
            for (Path jar : jars) {
                BoundedZip zip = BoundedZip.open(jar, limits);
                zips.add(zip);
                for (String name : zip.names()) {
                    if (name.endsWith(".class")) {
                        apiPackage(name)
                                .ifPresent(api -> bundled.add(
                                        api.substring(0, api.length() - 1).replace('/', '.')));
                    }
                }
            }
            Map<String, Set<String>> callers = new LinkedHashMap<>();
            String rootName = root.replace('.', '/');
            Set<String> seen = new LinkedHashSet<>();
            ArrayDeque<String> next = new ArrayDeque<>();
            next.add(rootName);
            seen.add(rootName);
            while (!next.isEmpty()) {
                String internal = next.poll();
                if (apiPackage(internal).isPresent()) {
                    continue; // loaded from the runtime whatever the JAR bundles (ClassLoadingPolicy)
                }
                byte[] bytes = read(zips, internal + ".class");
                if (bytes == null) {
                    continue; // the JDK's or the runtime's: not the function's code
                }
                ConstantPool pool = ConstantPool.read(bytes);
                String caller = internal.replace('/', '.');
                for (String method : pool.contextMethods()) {
                    callers.computeIfAbsent(method, m -> new LinkedHashSet<>()).add(caller);
                }
                for (String named : pool.classes()) {
                    if (seen.add(named)) {
                        next.add(named);
                    }
                }
            }
            List<Reference> references = new ArrayList<>();
            callers.forEach((method, classes) ->
                    references.add(new Reference(method, List.copyOf(classes), classes.contains(root))));
            return new FunctionJarScan(references, List.copyOf(bundled));
        } finally {
            for (BoundedZip zip : zips) {
                zip.close();
            }
        }
    }

    /** The API package (of {@link #API_PACKAGES}) a class's file or internal name is in; empty for none. */
    private static Optional<String> apiPackage(String internalName) {
        return API_PACKAGES.stream().filter(internalName::startsWith).findFirst();
    }

    /** A class file from the first JAR that has it, as the class loader finds it; null when none has. */
    private static byte[] read(List<BoundedZip> zips, String name) throws IOException {
        for (BoundedZip zip : zips) {
            Optional<byte[]> bytes = zip.read(name);
            if (bytes.isPresent()) {
                return bytes.get();
            }
        }
        return null;
    }

    /** What a class file's constant pool names: the classes, and the methods with their owners. */
    private record ConstantPool(Set<String> classes, List<String[]> methods) {

        /**
         * The unsupported {@code Context} methods referred to: every call site compiles to an
         * {@code (Interface)Methodref} there, whatever the source looked like.
         */
        Set<String> contextMethods() {
            Set<String> found = new TreeSet<>();
            for (String[] method : methods) {
                if (CONTEXT_CLASSES.contains(method[0]) && UNSUPPORTED.containsKey(method[1])) {
                    found.add(method[1]);
                }
            }
            return found;
        }

        static ConstantPool read(byte[] classFile) throws IOException {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(classFile));
            if (in.readInt() != 0xCAFEBABE) {
                return new ConstantPool(Set.of(), List.of());
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
            Set<String> classes = new LinkedHashSet<>();
            for (int i = 1; i < count; i++) {
                if (classNameIndex[i] != 0) {
                    String name = utf8[classNameIndex[i]];
                    // An array class is named by its descriptor: [[Lcom/acme/Word; reaches com/acme/Word.
                    int array = name.lastIndexOf('[');
                    if (array >= 0) {
                        name = name.charAt(array + 1) == 'L' ? name.substring(array + 2, name.length() - 1) : null;
                    }
                    if (name != null) {
                        classes.add(name);
                    }
                }
            }
            List<String[]> methods = new ArrayList<>();
            for (int[] ref : methodRefs) {
                if (ref != null) {
                    methods.add(new String[] {utf8[classNameIndex[ref[0]]], utf8[nameAndTypeName[ref[1]]]});
                }
            }
            return new ConstantPool(classes, methods);
        }
    }
}
