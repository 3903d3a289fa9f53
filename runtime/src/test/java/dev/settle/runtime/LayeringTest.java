package dev.settle.runtime;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.codeUnits;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaStaticInitializer;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import com.tngtech.archunit.library.dependencies.SlicesRuleDefinition;
import java.lang.reflect.Executable;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The runtime's packages depend on each other one way only: manifest, isolation, time and publish at the bottom;
 * deployment (a manifest with its loaded handlers), deadletter (what a dead letter is, how it is written and
 * replayed) and driver above them; function (Pulsar Functions behind the
 * driver's port) above driver; observe above driver; live (handler code swapped while running) above driver and
 * deployment; admin (its HTTP API) above live; journal (the settlement journal) above driver and deadletter; http (the server both ports use) at the bottom; {@link Settle} in the root package as the composition root that
 * wires them; cli on top. A dependency
 * against that direction fails the build here, naming the class, the line and the type it reached for.
 *
 * <p>Main classes only: tests may reach across packages to build fixtures.
 */
class LayeringTest {

    private static final String MANIFEST = "dev.settle.runtime.manifest..";
    private static final String ISOLATION = "dev.settle.runtime.isolation..";
    private static final String TIME = "dev.settle.runtime.time..";
    private static final String DEPLOYMENT = "dev.settle.runtime.deployment..";
    private static final String DRIVER = "dev.settle.runtime.driver..";
    private static final String OBSERVE = "dev.settle.runtime.observe..";
    private static final String LIVE = "dev.settle.runtime.live..";
    private static final String ADMIN = "dev.settle.runtime.admin..";
    private static final String HTTP = "dev.settle.runtime.http..";
    private static final String PUBLISH = "dev.settle.runtime.publish..";
    private static final String FUNCTION = "dev.settle.runtime.function..";
    private static final String CLI = "dev.settle.runtime.cli..";
    private static final String TRACE = "dev.settle.runtime.trace..";
    private static final String DEADLETTER = "dev.settle.runtime.deadletter..";
    private static final String PREFLIGHT = "dev.settle.runtime.preflight..";
    private static final String JOURNAL = "dev.settle.runtime.journal..";
    private static final String CANARY = "dev.settle.runtime.canary..";
    // Without "..": the root package alone, not its subpackages.
    private static final String ROOT = "dev.settle.runtime";

    /** The most parameters a constructor or method of a class (not a record) may take (issue 42). */
    private static final int MOST_PARAMETERS = 7;

    private static final JavaClasses RUNTIME = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.settle.runtime");

    private static final JavaClasses SDK = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.settle.sdk");

    @Test
    void eachPackageUsesOnlyThePackagesBeneathIt() {
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                // A new package must say where it stands: a class outside every layer fails here.
                .ensureAllClassesAreContainedInArchitecture()
                .layer("manifest")
                .definedBy(MANIFEST)
                .layer("isolation")
                .definedBy(ISOLATION)
                .layer("time")
                .definedBy(TIME)
                .layer("deployment")
                .definedBy(DEPLOYMENT)
                .layer("deadletter")
                .definedBy(DEADLETTER)
                .layer("driver")
                .definedBy(DRIVER)
                .layer("observe")
                .definedBy(OBSERVE)
                .layer("canary")
                .definedBy(CANARY)
                .layer("live")
                .definedBy(LIVE)
                .layer("admin")
                .definedBy(ADMIN)
                .layer("publish")
                .definedBy(PUBLISH)
                .layer("http")
                .definedBy(HTTP)
                .layer("function")
                .definedBy(FUNCTION)
                .layer("trace")
                .definedBy(TRACE)
                .layer("preflight")
                .definedBy(PREFLIGHT)
                .layer("journal")
                .definedBy(JOURNAL)
                .layer("composition root")
                .definedBy(ROOT)
                .layer("cli")
                .definedBy(CLI)
                .whereLayer("manifest")
                .mayNotAccessAnyLayer()
                .whereLayer("isolation")
                .mayOnlyAccessLayers("manifest")
                .whereLayer("time")
                .mayNotAccessAnyLayer()
                .whereLayer("deployment")
                .mayOnlyAccessLayers("manifest", "isolation")
                .whereLayer("publish")
                .mayOnlyAccessLayers("time")
                .whereLayer("http")
                .mayNotAccessAnyLayer()
                .whereLayer("deadletter")
                .mayOnlyAccessLayers("manifest", "time", "publish")
                .whereLayer("driver")
                .mayOnlyAccessLayers("manifest", "isolation", "time", "publish", "deadletter")
                .whereLayer("function")
                .mayOnlyAccessLayers("manifest", "isolation", "time", "driver", "publish")
                .whereLayer("observe")
                .mayOnlyAccessLayers("manifest", "driver", "http")
                .whereLayer("canary")
                .mayOnlyAccessLayers("time", "driver")
                .whereLayer("live")
                .mayOnlyAccessLayers("manifest", "isolation", "time", "deployment", "deadletter", "driver", "canary")
                .whereLayer("admin")
                .mayOnlyAccessLayers("manifest", "live", "http", "canary")
                .whereLayer("trace")
                .mayOnlyAccessLayers("driver", "publish")
                .whereLayer("preflight")
                .mayOnlyAccessLayers("manifest")
                .whereLayer("journal")
                .mayOnlyAccessLayers("manifest", "time", "driver", "deadletter")
                .whereLayer("composition root")
                .mayOnlyAccessLayers(
                        "manifest",
                        "isolation",
                        "time",
                        "deployment",
                        "deadletter",
                        "driver",
                        "observe",
                        "publish",
                        "function",
                        "canary",
                        "live",
                        "admin",
                        "trace",
                        "preflight",
                        "journal")
                .whereLayer("cli")
                .mayNotBeAccessedByAnyLayer()
                .check(RUNTIME);
    }

    @Test
    void theCompositionRootIsSettleOverReloadsOverSubscriptions() {
        // Settle starts and stops; Reloads changes the running subscriptions; Subscriptions (with the opener, the
        // running subscription and the stop) knows neither. Reloads once held Settle and called back into it.
        layeredArchitecture()
                .consideringOnlyDependenciesInLayers()
                .layer("Settle")
                .definedBy(rootClasses("Settle"))
                .layer("reloads")
                .definedBy(rootClasses("Reloads", "SubscriptionChanges", "PendingSubscription"))
                .layer("subscriptions")
                .definedBy(rootClasses("Subscriptions", "SubscriptionOpener", "RunningSubscription", "Stopping"))
                .whereLayer("Settle")
                .mayNotBeAccessedByAnyLayer()
                .whereLayer("reloads")
                .mayOnlyBeAccessedByLayers("Settle")
                .whereLayer("subscriptions")
                .mayOnlyBeAccessedByLayers("Settle", "reloads")
                .check(RUNTIME);
    }

    @Test
    void noClassOfTheCompositionRootDependsOnAnotherThatDependsBackOnIt() {
        // Within one package the layering above cannot see a cycle: each top-level class is a slice of its own here.
        SlicesRuleDefinition.slices()
                .assignedFrom(new SliceAssignment() {
                    @Override
                    public SliceIdentifier getIdentifierOf(JavaClass type) {
                        if (!type.getPackageName().equals(ROOT)) {
                            return SliceIdentifier.ignore();
                        }
                        String name = type.getName().replaceFirst("\\$.*", "");
                        return SliceIdentifier.of(name.substring(name.lastIndexOf('.') + 1));
                    }

                    @Override
                    public String getDescription() {
                        return "each top-level class of the composition root";
                    }
                })
                .should()
                .beFreeOfCycles()
                .check(RUNTIME);
    }

    /** The classes of the root package by their top-level names, nested classes with them. */
    private static com.tngtech.archunit.base.DescribedPredicate<JavaClass> rootClasses(String... names) {
        String pattern = "dev\\.settle\\.runtime\\.(" + String.join("|", names) + ")(\\$.*)?";
        return JavaClass.Predicates.resideInAPackage(ROOT)
                .and(com.tngtech.archunit.core.domain.properties.HasName.Predicates.nameMatching(pattern))
                .as(String.join(", ", names));
    }

    @Test
    void theManifestTheHandlerLoaderTimeAndDeploymentsKnowNothingOfPulsar() {
        // Pulsar's types belong to the driver and to the client the composition root builds; the manifest model
        // and class-loader isolation must stay testable, and explainable, without a broker or its client.
        noClasses()
                .that()
                .resideInAnyPackage(MANIFEST, ISOLATION, TIME, DEPLOYMENT, ADMIN)
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.apache.pulsar..")
                .check(RUNTIME);
    }

    @Test
    void onlyTheTracePackageTouchesOpenTelemetry() {
        // Tracing is off by default and then costs the message path nothing (the journal slot's no-op): the driver and
        // the outputs reach OpenTelemetry only through driver.Tracing and publish.SendTrace, which the trace package
        // implements.
        noClasses()
                .that()
                .resideOutsideOfPackage(TRACE)
                .should()
                .dependOnClassesThat()
                .resideInAPackage("io.opentelemetry..")
                .check(RUNTIME);
    }

    @Test
    void theSdkDependsOnTheJdkAlone() {
        // Handlers compile against the SDK and it is the only runtime package their class loader sees: anything
        // it depended on would leak into every handler (the SDK's POM bans dependencies; this bans imports).
        classes()
                .that()
                .resideInAPackage("dev.settle.sdk..")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage("java..", "dev.settle.sdk..")
                .check(SDK);
    }

    @Test
    void noConstructorOrMethodOfAClassTakesMoreThanSevenParameters() {
        // Issue 42: a long parameter list is a feature threaded through a constructor instead of plugged in as a part;
        // group the parameters by lifetime into a small parameter object instead. A record is exempt: its components
        // are its fields, and it is itself such an object.
        codeUnits()
                .that()
                .areDeclaredInClassesThat(DescribedPredicate.describe(
                        "are not records", type -> !type.reflect().isRecord()))
                .should(takeAtMost(MOST_PARAMETERS))
                .check(RUNTIME);
    }

    /**
     * At most {@code most} parameters as the source declares them: what the compiler adds does not count (an inner
     * class's outer instance, an enum's name and ordinal, a local class's captured variables: {@code -parameters} marks
     * them), nor do its own methods (a lambda's body, a bridge).
     */
    private static ArchCondition<JavaCodeUnit> takeAtMost(int most) {
        return new ArchCondition<>("take at most " + most + " parameters") {
            @Override
            public void check(JavaCodeUnit unit, ConditionEvents events) {
                if (unit instanceof JavaStaticInitializer) {
                    return;
                }
                Executable reflected = (Executable) unit.reflect();
                if (reflected.isSynthetic()) {
                    return;
                }
                long declared = Arrays.stream(reflected.getParameters())
                        .filter(parameter -> !parameter.isSynthetic() && !parameter.isImplicit())
                        .count();
                if (declared > most) {
                    events.add(SimpleConditionEvent.violated(
                            unit,
                            unit.getDescription() + " takes " + declared + " parameters, more than " + most + ", in "
                                    + unit.getSourceCodeLocation()
                                    + ": group them by lifetime into a parameter object (a record)"));
                }
            }
        };
    }
}
