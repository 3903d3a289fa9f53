package dev.settle.runtime.cli;

import dev.settle.runtime.PulsarClients;
import dev.settle.runtime.live.FleetControl;
import dev.settle.runtime.live.SwapRefusedException;
import dev.settle.runtime.manifest.ManifestException;
import dev.settle.runtime.manifest.ManifestLoader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;

/**
 * What {@code deploy}, {@code rollback} and {@code status} do with {@code --manifest}: the code store in Pulsar read
 * and written with the manifest's credentials, with no runtime running (docs/live-code.md). Exit codes as with
 * {@code --admin}: 0 done, 2 refused (the manifest, the JAR, nothing to roll back to), 1 Pulsar cannot be reached.
 */
final class FleetStore {
    interface Action {
        int run(FleetControl fleet) throws IOException, SwapRefusedException;
    }

    private FleetStore() {}

    static int run(Path manifest, PrintWriter err, Action action) {
        try (FleetControl fleet =
                FleetControl.open(ManifestLoader.loadWithoutJars(manifest, System.getenv()), PulsarClients::create)) {
            return action.run(fleet);
        } catch (ManifestException refused) {
            refused.problems().forEach(err::println);
            err.flush();
            return AdminClient.REFUSED;
        } catch (IllegalArgumentException e) {
            err.println("settle: " + e.getMessage());
            err.flush();
            return AdminClient.REFUSED;
        } catch (SwapRefusedException refused) {
            err.println("settle: refused; nothing changed");
            refused.problems().forEach(problem -> err.println("  " + problem));
            err.flush();
            return AdminClient.REFUSED;
        } catch (IOException e) {
            err.println("settle: " + e.getMessage());
            err.flush();
            return AdminClient.UNREACHABLE;
        }
    }
}
