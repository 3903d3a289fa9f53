# The Settle runtime image: the executable JAR on a JRE 17, run as a non-root user.
#
# Build it from the repository root, after Maven has built the JARs it copies:
#   ./mvnw -B -pl runtime,examples -am package -DskipTests
#   docker build -t settle/settle-runtime:0.1.0-SNAPSHOT .
# That reference is the Helm chart's default image (helm/settle: image.repository, and the tag is the chart's
# appVersion, which equals the Maven version); push it to your own registry and set image.repository there.
#
# Our CI machines have no Docker engine, so this file is not built there. The chart's tests (helm/) check that
# the build command above and the chart's default image agree.

FROM eclipse-temurin:17-jre

# A fixed numeric user, so Kubernetes can verify runAsNonRoot; the chart's podSecurityContext uses the same ids.
RUN groupadd --system --gid 10001 settle \
 && useradd --system --uid 10001 --gid settle --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin settle \
 && mkdir -p /opt/settle/handlers /opt/settle/lib /etc/settle \
 && chown settle:settle /opt/settle/handlers

# Owned by root and read-only for the runtime user: the runtime never writes next to its code.
COPY runtime/target/settle-runtime.jar /opt/settle/settle-runtime.jar
# The example handlers, so that the chart's default values run as they are. Images for your own handlers build
# FROM this one and add their JARs under /opt/settle/lib/ (or the chart downloads them at start).
COPY examples/target/settle-examples.jar /opt/settle/examples/settle-examples.jar

USER 10001:10001
WORKDIR /opt/settle
# /metrics, /livez, /readyz (the manifest's http.port).
EXPOSE 8080

# Exec form: java is PID 1 and receives SIGTERM itself, so the runtime drains in-flight handler calls (up to
# 20 s) and flushes acknowledgements before it exits. A shell form would swallow the signal.
ENTRYPOINT ["java", "-XX:MaxRAMPercentage=75.0", "-XX:+ExitOnOutOfMemoryError", "-jar", "/opt/settle/settle-runtime.jar"]
CMD ["run", "/etc/settle/manifest.yaml"]
