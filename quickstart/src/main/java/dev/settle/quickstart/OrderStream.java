package dev.settle.quickstart;

import dev.settle.examples.orders.Order;
import java.util.ArrayList;
import java.util.List;

/**
 * The sample orders, and the outcomes the orders example handler must give them (see its javadoc): every ten
 * orders hold six good ones, one flaky (retried once), one over the rate limit (held 2 s once), one invalid
 * (well-formed JSON, but a quantity of 0: dropped) and one poison order (retried until it reaches the dead-letter
 * topic after 5 attempts). They are the example's own {@link Order} record, published as JSON of it.
 */
final class OrderStream {
    static final int MAX_ATTEMPTS = 5;

    record Sample(Order order, Kind kind) {
        String id() {
            return order.id();
        }
    }

    enum Kind {
        GOOD,
        FLAKY,
        RATE_LIMITED,
        INVALID,
        POISON
    }

    private final List<Sample> orders;

    private OrderStream(List<Sample> orders) {
        this.orders = orders;
    }

    static OrderStream of(int count) {
        List<Sample> orders = new ArrayList<>();
        for (int i = 1; i <= count; i++) {
            String id = "o-" + i;
            Kind kind = switch (i % 10) {
                case 7 -> Kind.FLAKY;
                case 8 -> Kind.RATE_LIMITED;
                case 9 -> Kind.INVALID;
                case 0 -> Kind.POISON;
                default -> Kind.GOOD;
            };
            Order order = switch (kind) {
                case GOOD -> new Order(id, "widget", 1 + i % 5);
                case FLAKY -> new Order(id, "flaky", 2);
                case RATE_LIMITED -> new Order(id, "widget", 150);
                case INVALID -> new Order(id, "widget", 0);
                case POISON -> new Order(id, "poison", 1);
            };
            orders.add(new Sample(order, kind));
        }
        return new OrderStream(orders);
    }

    List<Sample> orders() {
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
        long invalid = count(Kind.INVALID);
        long poison = count(Kind.POISON);
        return new Summary(
                good + 2 * flaky + 2 * rateLimited + invalid + MAX_ATTEMPTS * poison,
                good + flaky + rateLimited,
                flaky + MAX_ATTEMPTS * poison,
                rateLimited,
                invalid,
                0,
                0,
                poison,
                orders.stream()
                        .filter(order -> order.kind() == Kind.POISON)
                        .map(Sample::id)
                        .toList());
    }

    boolean isSettled(Summary summary) {
        return summary.equals(expected());
    }
}
