package dev.settle.runtime.driver;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.thirdparty.org.objectweb.asm.ClassReader;
import com.tngtech.archunit.thirdparty.org.objectweb.asm.ClassVisitor;
import com.tngtech.archunit.thirdparty.org.objectweb.asm.Handle;
import com.tngtech.archunit.thirdparty.org.objectweb.asm.Label;
import com.tngtech.archunit.thirdparty.org.objectweb.asm.MethodVisitor;
import com.tngtech.archunit.thirdparty.org.objectweb.asm.Opcodes;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The message path chooses its features once, when a subscription starts (docs/design.md, "The pipeline"): a
 * feature that is off is a no-op object, never a null that each message asks about. So no method of a message-path
 * class (its constructors excepted: they are the wiring) compares a field of one of Settle's own types (a part, a
 * port, a stage) with null.
 */
class MessagePathTest {
    private static final JavaClasses DRIVER = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.settle.runtime.driver");

    /**
     * The classes a message passes through between its receipt and its settlement, and every part of a slot and every
     * settlement strategy (the receive loops, which run once per subscription, are not among them).
     */
    private static final Set<String> MESSAGE_PATH = Set.of(
            Processing.class.getName(),
            Settlement.class.getName(),
            InFlight.class.getName(),
            Pipeline.class.getName(),
            ExceptionRulesPort.class.getName());

    private static boolean onTheMessagePath(JavaClass type) {
        return MESSAGE_PATH.contains(type.getName())
                || type.isAssignableTo(Pipeline.Part.class)
                || type.isAssignableTo(SettlementStrategy.class)
                || type.isAssignableTo(Repeats.class);
    }

    @Test
    void noMessagePathClassAsksWhetherAFeatureIsThere() {
        noFeatureNullChecks().check(DRIVER);
    }

    @Test
    void theRuleLooksAtTheStrategiesThePartsAndTheHub() {
        assertThat(DRIVER.stream().filter(MessagePathTest::onTheMessagePath).map(JavaClass::getSimpleName))
                .contains(
                        "Processing",
                        "Settlement",
                        "AtLeastOnce",
                        "ExactlyOnce",
                        "TracingJournal",
                        "SettlementJournal",
                        "ExceptionRules",
                        "DuplicateGuard");
    }

    @Test
    void theRuleCatchesAClassThatAsksWhetherAFeatureIsThere() {
        JavaClasses bad = new ClassFileImporter().importClasses(SwitchingOnAFeature.class);

        assertThatThrownBy(() ->
                        classes().should(notCompareAFeatureFieldWithNull()).check(bad))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("SwitchingOnAFeature.handle compares field tracing with null (line");
    }

    @Test
    void aConstructorMayTurnANullIntoANoOp() {
        assertThat(featureNullChecks(SwitchingOnAFeature.class))
                .as("the constructor's check is wiring, not the message path")
                .noneMatch(found -> found.contains("<init>"));
    }

    private static ArchRule noFeatureNullChecks() {
        return classes()
                .that(DescribedPredicate.describe("are on the message path", MessagePathTest::onTheMessagePath))
                .should(notCompareAFeatureFieldWithNull());
    }

    private static ArchCondition<JavaClass> notCompareAFeatureFieldWithNull() {
        return new ArchCondition<>("not compare a field of one of Settle's own types with null outside a constructor") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                for (String found : featureNullChecks(type.reflect())) {
                    events.add(SimpleConditionEvent.violated(type, found));
                }
            }
        };
    }

    /** Each place a method of {@code type} reads a field of a {@code dev.settle.runtime} type and jumps on null. */
    static List<String> featureNullChecks(Class<?> type) {
        // A set: javac copies a finally block into each of its exits, with the same line.
        Set<String> found = new LinkedHashSet<>();
        String simpleName = type.getName().substring(type.getName().lastIndexOf('.') + 1);
        try (InputStream bytes =
                type.getClassLoader().getResourceAsStream(type.getName().replace('.', '/') + ".class")) {
            new ClassReader(bytes)
                    .accept(
                            new ClassVisitor(Opcodes.ASM9) {
                                @Override
                                public MethodVisitor visitMethod(
                                        int access,
                                        String method,
                                        String descriptor,
                                        String signature,
                                        String[] exceptions) {
                                    if (method.equals("<init>") || method.equals("<clinit>")) {
                                        return null;
                                    }
                                    return new NullChecks(simpleName + "." + method, found);
                                }
                            },
                            0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new ArrayList<>(found);
    }

    /** Finds a read of a field of one of Settle's types followed at once by a jump on null. */
    private static final class NullChecks extends MethodVisitor {
        private final String method;
        private final Set<String> found;
        private String field;
        private int line;

        NullChecks(String method, Set<String> found) {
            super(Opcodes.ASM9);
            this.method = method;
            this.found = found;
        }

        @Override
        public void visitLineNumber(int number, Label start) {
            line = number;
        }

        @Override
        public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
            boolean read = opcode == Opcodes.GETFIELD || opcode == Opcodes.GETSTATIC;
            field = read && descriptor.startsWith("Ldev/settle/runtime/") ? name : null;
        }

        @Override
        public void visitJumpInsn(int opcode, Label label) {
            if (field != null && (opcode == Opcodes.IFNULL || opcode == Opcodes.IFNONNULL)) {
                found.add(method + " compares field " + field + " with null (line " + line + ")");
            }
            field = null;
        }

        @Override
        public void visitInsn(int opcode) {
            field = null;
        }

        @Override
        public void visitIntInsn(int opcode, int operand) {
            field = null;
        }

        @Override
        public void visitVarInsn(int opcode, int index) {
            field = null;
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
            field = null;
        }

        @Override
        public void visitMethodInsn(int opcode, String owner, String name, String descriptor, boolean isInterface) {
            field = null;
        }

        @Override
        public void visitInvokeDynamicInsn(String name, String descriptor, Handle bootstrap, Object... arguments) {
            field = null;
        }

        @Override
        public void visitLdcInsn(Object value) {
            field = null;
        }

        @Override
        public void visitIincInsn(int index, int increment) {
            field = null;
        }
    }

    /** What the rule is there to stop: a message path that asks, per message, whether tracing is on. */
    static final class SwitchingOnAFeature {
        private final Tracing tracing;
        private final boolean traced;

        SwitchingOnAFeature(Tracing tracing) {
            this.tracing = tracing;
            this.traced = this.tracing != null;
        }

        void handle(UnitOfWork<org.apache.pulsar.client.api.Message<?>> work) {
            if (tracing != null) {
                work.traced(tracing.start("orders", work.message(), work.attempt()));
            }
        }
    }
}
