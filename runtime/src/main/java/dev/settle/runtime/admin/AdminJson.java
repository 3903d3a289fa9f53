package dev.settle.runtime.admin;

import dev.settle.runtime.canary.Outcomes;
import dev.settle.runtime.http.Response;
import dev.settle.runtime.live.Deployed;
import dev.settle.runtime.live.GenerationRecord;
import dev.settle.runtime.live.Ramp;
import dev.settle.runtime.live.RampStatus;
import dev.settle.runtime.live.SubscriptionStatus;
import dev.settle.runtime.live.SwapRefusedException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The admin API's answers as JSON: a deploy's result, a subscription's status with its ramp, a refusal. One place
 * for their field names: {@code settle status --manifest} prints the same status.
 */
final class AdminJson {
    private AdminJson() {}

    static Map<String, Object> error(String message) {
        return Map.of("error", message);
    }

    static Map<String, Object> error(SwapRefusedException refused) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", "refused; the running generation is untouched");
        body.put("problems", refused.problems());
        return body;
    }

    static Map<String, Object> json(Deployed deployed) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("subscription", deployed.subscription());
        body.put("generation", deployed.generation());
        body.put("sha256", deployed.sha256());
        body.put("handler", deployed.handler());
        body.put("previousSha256", deployed.previousSha256());
        body.put("swapMillis", deployed.swapMillis());
        return body;
    }

    /** A status as the API answers it; {@code settle status --manifest} prints the same. */
    static Map<String, Object> json(SubscriptionStatus status) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("subscription", status.subscription());
        body.put("generation", status.active().number());
        body.put("sha256", status.active().sha256());
        body.put("handler", status.active().handler());
        body.put("source", status.active().source().name().toLowerCase(Locale.ROOT));
        body.put("activeSince", status.active().activatedAt().toString());
        body.put("kept", status.kept().stream().map(AdminJson::json).toList());
        body.put("desired", status.desired());
        status.problem().ifPresent(problem -> body.put("problem", problem));
        status.reload().ifPresent(problem -> body.put("reload", problem));
        if (!status.fleet().isEmpty()) {
            body.put(
                    "fleet",
                    status.fleet().stream()
                            .map(report -> {
                                Map<String, Object> runtime = new LinkedHashMap<>();
                                runtime.put("instance", report.instance());
                                if (report.malformed().isPresent()) {
                                    runtime.put("malformed", report.malformed().get());
                                    return runtime;
                                }
                                runtime.put("generation", report.generation());
                                runtime.put("sha256", report.sha256());
                                report.problem().ifPresent(problem -> runtime.put("problem", problem));
                                runtime.put("at", report.at().toString());
                                return runtime;
                            })
                            .toList());
        }
        return body;
    }

    /** A ramp as the API answers it: both generations' slices and counts side by side. */
    static Map<String, Object> rampJson(RampStatus status) {
        var ramp = status.ramp();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("generation", ramp.generation());
        body.put("percent", ramp.status() == Ramp.Status.RUNNING ? ramp.percent() : 0);
        body.put("steps", ramp.steps());
        body.put("stepEverySeconds", ramp.stepEvery().toSeconds());
        body.put("stepStartedAt", ramp.stepStartedAt().toString());
        body.put("status", ramp.status().name().toLowerCase(Locale.ROOT));
        if (!ramp.reason().isEmpty()) {
            body.put("reason", ramp.reason());
        }
        status.last().ifPresent(judged -> {
            body.put("verdict", judged.verdict().name().toLowerCase(Locale.ROOT));
            body.put("judged", judged.why());
        });
        body.put("currentGeneration", status.currentGeneration());
        body.put("canaryCalls", countsJson(status.canary()));
        body.put("currentCalls", countsJson(status.current()));
        return body;
    }

    private static Map<String, Object> countsJson(Outcomes.Snapshot counts) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("calls", counts.calls());
        body.put("failureRate", counts.failureRate());
        body.put("retryRate", counts.retryRate());
        body.put("retryAfterRate", counts.retryAfterRate());
        body.put("noneRate", counts.noneRate());
        body.put("dropRate", counts.dropRate());
        body.put("p99Millis", counts.p99Millis());
        return body;
    }

    private static Map<String, Object> json(GenerationRecord generation) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("generation", generation.number());
        body.put("sha256", generation.sha256());
        body.put("handler", generation.handler());
        body.put("source", generation.source().name().toLowerCase(Locale.ROOT));
        body.put("activatedAt", generation.activatedAt().toString());
        return body;
    }

    /**
     * A JSON answer. A body left unread (a 413 on the header alone, a 401) is not waited for: the connection closes
     * after the answer ({@link dev.settle.runtime.http.JettyService}).
     */
    static Response answer(int status, Object body) {
        byte[] bytes = (Json.write(body) + "\n").getBytes(StandardCharsets.UTF_8);
        return new Response(status, "application/json", Map.of(), bytes);
    }
}
