package dev.settle.quickstart;

import java.util.ArrayList;
import java.util.List;

/**
 * The sample orders, and the outcomes the orders example handler must give them (see its javadoc): every ten
 * orders hold six good ones, one flaky (retried once), one over the rate limit (held 2 s once), one malformed
 * (dropped) and one poison order (retried until it reaches the dead-letter topic after 5 attempts).
 */
final class OrderStream {
    static final int MAX_ATTEMPTS = 5;

    record Order(String id, String payload, Kind kind) {}

    enum Kind { GOOD, FLAKY, RATE_LIMITED, MALFORMED, POISON }

    private final List<Order> orders;

    private OrderStream(List<Order> orders) {
        this.orders = orders;
    }

    static OrderStream of(int count) {
        List<Order> orders = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            String id = "o-" + i;
            Kind kind = switch (i % 10) {
                case 7 -> Kind.FLAKY;
                case 8 -> Kind.RATE_LIMITED;
                case 9 -> Kind.MALFORMED;
                case 0 -> Kind.POISON;
                default -> Kind.GOOD;
            };
            String payload = switch (kind) {
                case GOOD -> order(id, "widget", 1 + i % 5);
                case FLAKY -> order(id, "flaky", 2);
                case RATE_LIMITED -> order(id, "widget", 150);
                case MALFORMED -> "{\"id\": \"" + id + "\", \"sku\": ";
                case POISON -> order(id, "poison", 1);
            };
            orders.add(new Order(id, payload, kind));
        }
        return new OrderStream(orders);
    }

    private static String order(String id, String sku, int quantity) {
        return "{\"id\": \"" + id + "\", \"sku\": \"" + sku + "\", \"quantity\": " + quantity + "}";
    }

    List<Order> orders() {
        return orders;
    }

    long count(Kind kind) {
        return orders.stream().filter(order -> order.kind() == kind).count();
    }

    /** What the summary must say once every order is settled. */
    Summary expected() {
        long good = count(Kind.GOOD);
        long flaky = count(Kind.FLAKY);
        long rateLimited = count(Kind.RATE_LIMITED);
        long malformed = count(Kind.MALFORMED);
        long poison = count(Kind.POISON);
        return new Summary(
                good + 2 * flaky + 2 * rateLimited + malformed + MAX_ATTEMPTS * poison,
                good + flaky + rateLimited,
                flaky + MAX_ATTEMPTS * poison,
                rateLimited,
                malformed,
                0,
                0,
                poison,
                orders.stream().filter(order -> order.kind() == Kind.POISON).map(Order::id).toList());
    }

    boolean isSettled(Summary summary) {
        return summary.equals(expected());
    }
}
