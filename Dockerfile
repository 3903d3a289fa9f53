# The Settle runtime image: the runtime on a Java 17 runtime of its own (jlink, only the modules it uses), on a root
# file system of its own (the C libraries Java needs and a POSIX shell, nothing else), run as a non-root user, with
# a class-data archive for a fast start. About 170 MB, against 460 MB on a Debian base with a full JRE.
#
# Build it from the repository root, after Maven has built what it copies:
#   ./mvnw -B -pl runtime,examples -am package -DskipTests
#   docker build -t settle/settle-runtime:0.1.0-SNAPSHOT .
#   docker build --target examples -t settle/settle-runtime:0.1.0-SNAPSHOT-examples .
# The first is the production image (no example handlers); the second adds the example handlers under
# /opt/settle/examples/, which the Helm chart's default values run (helm/settle: image.tag, image.examples).
# CI builds both without a Docker engine (deploy/image-test.sh: buildah, on a Debian base made by debootstrap).
#
# BUILD_IMAGE is any glibc-based image with a JDK 17 (jlink and its jmods) and a POSIX shell; only the build stages
# run on it, none of it ships but the libraries the JDK's own binaries link. Pin it by digest where you build for
# production, for example eclipse-temurin:17.0.15_6-jdk-noble@sha256:<digest of the tag you vetted>.
ARG BUILD_IMAGE=eclipse-temurin:17.0.15_6-jdk-noble
# The Java modules in the image: what `jdeps --print-module-deps` finds in the runtime and its libraries, plus
# jdk.crypto.ec (TLS with elliptic curves) and jdk.zipfs. A handler that needs another module (java.scripting,
# jdk.httpserver, ...) builds the image with --build-arg JRE_MODULES=<this list>,<the module>.
ARG JRE_MODULES=java.base,java.compiler,java.desktop,java.naming,java.net.http,java.security.jgss,java.sql,jdk.management,jdk.unsupported,jdk.crypto.ec,jdk.zipfs

# Everything the image holds, assembled on the build image at the paths it has in the image: the Java runtime, the
# root file system (deploy/image/rootfs.sh), the JARs and the class path. The image itself has no tools to do it.
FROM ${BUILD_IMAGE} AS assemble
ARG JRE_MODULES
# --strip-java-debug-attributes, not --strip-debug: Debian's jlink strips native symbols too, with objcopy, which a
# JDK image need not have (a JDK's native libraries ship stripped).
RUN jlink --add-modules "${JRE_MODULES}" --strip-java-debug-attributes --no-man-pages --no-header-files --compress=2 \
      --output /opt/settle/jre
COPY deploy/image/ /tmp/image/
RUN sh /tmp/image/rootfs.sh /opt/settle/jre /rootfs
COPY runtime/target/image/lib/ /opt/settle/runtime/lib/
COPY runtime/target/image/app/ /opt/settle/runtime/app/
COPY runtime/target/settle-runtime-classes.jar /opt/settle/runtime/app/settle-runtime-classes.jar
# The class path in a fixed order, written once: the class-data archive is valid only for the class path it was
# made with, so it must not depend on how a directory lists. settle on the PATH, so that `settle validate ...`
# works in the image as in a clone (deploy/image/settle).
RUN sh /tmp/image/write-classpath.sh /opt/settle > /opt/settle/classpath.args \
 && cp /tmp/image/jvm.args /opt/settle/jvm.args \
 && cp /tmp/image/settle /rootfs/usr/local/bin/settle \
 && chmod 0755 /rootfs/usr/local/bin/settle

# A training run: `settle validate` on a manifest that loads a handler, then a short `settle run` against no
# broker, whose loaded classes go into a static AppCDS archive. On the assembled files themselves (an archive is
# valid only for the Java runtime and the JARs it was made with), with the build image's tools. The example
# handlers come in here only.
FROM assemble AS training
COPY examples/target/settle-examples.jar /opt/settle/examples/settle-examples.jar
RUN PATH=/opt/settle/jre/bin:$PATH sh /tmp/image/train.sh /opt/settle

# The production image. Layers from the least to the most often changed, so a code change ships only the last
# ones: the root file system and the Java runtime, the third-party JARs (about 50 MB), our own (under 1 MB), and the
# class-data archive made from them. Owned by root and read-only for the runtime user. Under runtime/, apart from
# /opt/settle/lib/, where images built FROM this one put their handler JARs.
FROM scratch AS runtime
COPY --from=assemble /rootfs/ /
COPY --from=assemble /opt/settle/jre/ /opt/settle/jre/
COPY --from=assemble /opt/settle/runtime/lib/ /opt/settle/runtime/lib/
COPY --from=assemble /opt/settle/runtime/app/ /opt/settle/runtime/app/
COPY --from=assemble /opt/settle/classpath.args /opt/settle/jvm.args /opt/settle/
COPY --from=training /opt/settle/settle.jsa /opt/settle/settle.jsa
ENV PATH=/opt/settle/jre/bin:/usr/local/bin:/usr/bin:/bin JAVA_HOME=/opt/settle/jre
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
