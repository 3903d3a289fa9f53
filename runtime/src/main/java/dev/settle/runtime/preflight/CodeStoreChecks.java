package dev.settle.runtime.preflight;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The checks of the {@code admin:} section's code store in Pulsar: package management, and the records topic. */
final class CodeStoreChecks {
    private final Optional<BrokerRest> rest;
    private final BrokerSettings settings;
    private final TopicChecks topics;

    CodeStoreChecks(Optional<BrokerRest> rest, BrokerSettings settings, TopicChecks topics) {
        this.rest = rest;
        this.settings = settings;
        this.topics = topics;
    }

    /** Package management on, and the role's rights in the code namespace (admin.codeStore: pulsar). */
    List<Check> checks(String namespace) {
        if (rest.isEmpty()) {
            return List.of(Check.couldNotCheck(
                    BrokerPreflight.ADMIN,
                    "package-management",
                    BrokerPreflight.NO_ADMIN_URL + ", and admin.codeStore: pulsar keeps code as packages there"));
        }
        List<Check> checks = new ArrayList<>();
        try {
            BrokerRest.Answer packages = rest.get().get("/admin/v3/packages/function/" + namespace);
            BrokerSettings.Reading enabled = settings.read("enablePackagesManagement");
            if (enabled.value().isPresent() && !enabled.is("true")) {
                checks.add(Check.failed(
                        BrokerPreflight.ADMIN,
                        "package-management",
                        true,
                        "admin.codeStore: pulsar keeps code as Pulsar packages, and the broker has"
                                + " enablePackagesManagement=" + enabled.value().get() + ": set it to true (with a"
                                + " packagesManagementStorageProvider), or use admin.codeStore: disk"));
            } else if (packages.ok()) {
                checks.add(Check.ok(
                        BrokerPreflight.ADMIN, "package-management", "the role may list the packages of " + namespace));
            } else if (packages.forbidden()) {
                checks.add(Check.failed(
                        BrokerPreflight.ADMIN,
                        "package-management",
                        true,
                        "the role may not use the packages of " + namespace + " (" + packages.describe()
                                + "): grant it, as pulsar-admin namespaces grant-permission --role <role> --actions"
                                + " packages,produce,consume " + namespace));
            } else {
                checks.add(Check.failed(
                        BrokerPreflight.ADMIN,
                        "package-management",
                        true,
                        "admin.codeStore: pulsar keeps code as Pulsar packages, and " + packages.describe()
                                + ": check that the broker has enablePackagesManagement=true, or use"
                                + " admin.codeStore: disk"));
            }
        } catch (IOException e) {
            checks.add(Check.couldNotCheck(BrokerPreflight.ADMIN, "package-management", e.getMessage()));
        }
        checks.add(topics.writable(
                BrokerPreflight.ADMIN, "code-records-topic", "persistent://" + namespace + "/settle-code"));
        return checks;
    }
}
