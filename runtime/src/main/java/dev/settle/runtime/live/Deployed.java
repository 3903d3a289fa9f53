package dev.settle.runtime.live;

/**
 * A generation swapped in: the admin API's answer to an upload or a rollback.
 *
 * @param swapMillis how long handler calls waited at the swap (the old generation's calls finishing), to the
 *     microsecond
 */
public record Deployed(
        String subscription, int generation, String sha256, String handler, String previousSha256, double swapMillis) {
    /** {@code next} swapped in (or, with no pause, recorded) for {@code subscription} over {@code previousSha256}. */
    static Deployed of(String subscription, GenerationRecord next, String previousSha256, double swapMillis) {
        return new Deployed(subscription, next.number(), next.sha256(), next.handler(), previousSha256, swapMillis);
    }
}
