#!/usr/bin/env sh
# The benchmarks (docs/benchmarks.md): builds what they need, then runs the harness in a plain JVM, which starts a
# real Pulsar broker in-process and each measured consumer in a child JVM of its own, and prints a Markdown table.
# --smoke runs tiny counts (what ./mvnw verify runs); without it, the full run takes about 5-10 minutes on 2 cores.
set -eu
cd "$(dirname "$0")/.."
./mvnw -q -B package -DskipTests -pl benchmarks -am
mkdir -p benchmarks/target/tmp
exec java -Xmx1g -XX:MaxDirectMemorySize=512m \
  --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.util.zip=ALL-UNNAMED \
  --add-opens java.base/sun.net=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED \
  --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED \
  --add-opens java.base/jdk.internal.platform=ALL-UNNAMED --add-opens java.management/sun.management=ALL-UNNAMED \
  --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED -Dio.netty.tryReflectionSetAccessible=true \
  -Djava.io.tmpdir=benchmarks/target/tmp \
  -cp "benchmarks/target/classes:$(cat benchmarks/target/benchmarks.classpath)" \
  dev.settle.benchmarks.Benchmarks "$@"
