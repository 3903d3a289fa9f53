# The Settle runtime image: the runtime on a JRE 17, run as a non-root user, with a class-data archive for a fast
# start.
#
# Build it from the repository root, after Maven has built what it copies:
#   ./mvnw -B -pl runtime,examples -am package -DskipTests
#   docker build -t settle/settle-runtime:0.1.0-SNAPSHOT .
#   docker build --target examples -t settle/settle-runtime:0.1.0-SNAPSHOT-examples .
# The first is the production image (no example handlers); the second adds the example handlers under
# /opt/settle/examples/, which the Helm chart's default values run (helm/settle: image.tag, image.examples).
# CI builds both without a Docker engine (deploy/image-test.sh: buildah, on a Debian base made by debootstrap).
#
# BASE_IMAGE is any image with a Java 17 runtime on the PATH and a POSIX shell. Pin it by digest where you build
# for production, for example eclipse-temurin:17.0.15_6-jre-noble@sha256:<digest of the tag you vetted>.
ARG BASE_IMAGE=eclipse-temurin:17.0.15_6-jre-noble

# Everything the runtime stage has except the class-data archive; the training stage runs it once to make one.
FROM ${BASE_IMAGE} AS runtime-base
# A fixed numeric user, so Kubernetes can verify runAsNonRoot; the chart's podSecurityContext uses the same ids.
RUN groupadd --system --gid 10001 settle \
 && useradd --system --uid 10001 --gid settle --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin settle \
 && mkdir -p /opt/settle/handlers /opt/settle/lib /etc/settle \
 && chown settle:settle /opt/settle/handlers
# Layers from the least to the most often changed, so a code change ships only the last, small ones: the
# third-party JARs (about 50 MB), then our own (under 1 MB). Owned by root and read-only for the runtime user.
# Under runtime/, apart from /opt/settle/lib/, where images built FROM this one put their handler JARs.
COPY runtime/target/image/lib/ /opt/settle/runtime/lib/
COPY runtime/target/image/app/ /opt/settle/runtime/app/
COPY runtime/target/settle-runtime-classes.jar /opt/settle/runtime/app/settle-runtime-classes.jar
# The class path in a fixed order, written once: the class-data archive is valid only for the class path it was
# made with, so it must not depend on how a directory lists.
COPY deploy/image/ /opt/settle/
# settle on the PATH, so that `settle validate ...` works in the image as in a clone (deploy/image/settle).
RUN sh /opt/settle/write-classpath.sh /opt/settle > /opt/settle/classpath.args \
 && rm /opt/settle/write-classpath.sh \
 && mv /opt/settle/settle /usr/local/bin/settle \
 && chmod 0755 /usr/local/bin/settle

# A training run: `settle validate` on a manifest that loads a handler, then a short `settle run` against no
# broker, which the JVM records into a dynamic AppCDS archive at exit. The example handlers come in here only.
FROM runtime-base AS training
COPY examples/target/settle-examples.jar /opt/settle/examples/settle-examples.jar
RUN sh /opt/settle/train.sh /opt/settle

# The production image.
FROM runtime-base AS runtime
COPY --from=training /opt/settle/settle.jsa /opt/settle/settle.jsa
USER 10001:10001
WORKDIR /opt/settle
# /metrics, /livez, /readyz (the manifest's http.port).
EXPOSE 8080
# Exec form: java is PID 1 and receives SIGTERM itself, so the runtime drains in-flight handler calls (up to
# 20 s) and flushes acknowledgements before it exits. A shell form would swallow the signal.
# jvm.args: the memory sizing from the container's limit and the class-data archive (see that file for why).
ENTRYPOINT ["java", "@/opt/settle/jvm.args", "@/opt/settle/classpath.args", "dev.settle.runtime.cli.Main"]
CMD ["run", "/etc/settle/manifest.yaml"]

# The production image plus the example handlers: what the chart's default values run.
FROM runtime AS examples
COPY examples/target/settle-examples.jar /opt/settle/examples/settle-examples.jar

# The default target is the production image.
FROM runtime
