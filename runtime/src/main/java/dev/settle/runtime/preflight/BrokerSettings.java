package dev.settle.runtime.preflight;

import java.io.IOException;
import java.util.Map;
import java.util.Optional;

/**
 * The broker's settings in force, as {@code GET /admin/v2/brokers/configuration/runtime} answers them: read once, on
 * first use. Pulsar answers it to a superuser role only, so a check that needs a setting says which it could not
 * read, and why.
 */
final class BrokerSettings {
    static final String PATH = "/admin/v2/brokers/configuration/runtime";

    private final Optional<BrokerRest> rest;
    private Map<?, ?> values;
    private String unreadable;

    BrokerSettings(Optional<BrokerRest> rest) {
        this.rest = rest;
    }

    /** A setting's value, or why it could not be read. */
    record Reading(Optional<String> value, String whyNot) {
        boolean is(String expected) {
            return value.isPresent() && value.get().equalsIgnoreCase(expected);
        }
    }

    Reading read(String setting) {
        load();
        if (values == null) {
            return new Reading(Optional.empty(), "the broker's " + setting + " could not be read: " + unreadable);
        }
        Object value = values.get(setting);
        return value == null
                ? new Reading(Optional.empty(), "the broker's settings do not list " + setting)
                : new Reading(Optional.of(String.valueOf(value)), "");
    }

    private void load() {
        if (values != null || unreadable != null) {
            return;
        }
        if (rest.isEmpty()) {
            unreadable = BrokerPreflight.NO_ADMIN_URL + " (the broker's settings are read from its admin API)";
            return;
        }
        try {
            BrokerRest.Answer answer = rest.get().get(PATH);
            if (answer.ok() && answer.json() instanceof Map<?, ?> map) {
                values = map;
            } else if (answer.forbidden()) {
                unreadable = answer.describe() + ": reading the broker's settings needs a superuser role (the"
                        + " broker's superUserRoles)";
            } else {
                unreadable = answer.describe();
            }
        } catch (IOException e) {
            unreadable = e.getMessage();
        } catch (RuntimeException e) {
            unreadable = "GET " + PATH + " answered what is not JSON (" + e.getMessage() + ")";
        }
    }
}
