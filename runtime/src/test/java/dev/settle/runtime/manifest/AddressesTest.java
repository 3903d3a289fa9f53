package dev.settle.runtime.manifest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class AddressesTest {

    @Test
    void ipLiteralsAndLocalhostCanBeBound() {
        for (String address :
                List.of("0.0.0.0", "127.0.0.1", "255.255.255.255", "::", "::1", "[::1]", "2001:db8::7", "localhost")) {
            assertThat(Addresses.isBindable(address)).as(address).isTrue();
        }
    }

    @Test
    void anythingElseIsRefusedWithoutAskingDns() {
        for (String address : List.of(
                "999.1.1.1",
                "1.2.3",
                "1.2.3.4.5",
                "01.2.3.4",
                "metrics.example.com",
                "::zz",
                "[1.2.3.4]",
                "localhost.",
                "0.0.0.0:9090")) {
            assertThat(Addresses.isBindable(address)).as(address).isFalse();
        }
    }

    @Test
    void aServiceUrlPortMustBeOneTo65535ForEveryHost() {
        assertThat(Addresses.badPort("pulsar://localhost:6650")).isEmpty();
        assertThat(Addresses.badPort("pulsar://localhost")).isEmpty();
        assertThat(Addresses.badPort("pulsar+ssl://a:6651,b:6651/")).isEmpty();
        assertThat(Addresses.badPort("pulsar://[::1]")).isEmpty();
        assertThat(Addresses.badPort("pulsar://[::1]:65535")).isEmpty();

        assertThat(Addresses.badPort("pulsar://localhost:65536")).contains("65536");
        assertThat(Addresses.badPort("pulsar://localhost:0")).contains("0");
        assertThat(Addresses.badPort("pulsar://localhost:-1")).contains("-1");
        assertThat(Addresses.badPort("pulsar://localhost:")).contains("");
        assertThat(Addresses.badPort("pulsar://a:6650,b:99999999999")).contains("99999999999");
        assertThat(Addresses.badPort("pulsar://[::1]:70000/")).contains("70000");
    }
}
