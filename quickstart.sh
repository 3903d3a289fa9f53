#!/usr/bin/env sh
# The quickstart: builds what it needs, then runs a real Pulsar broker, Settle with the orders example, and a
# stream of sample orders, all in one JVM. Ctrl-C stops everything. Files stay under */target/.
set -eu
cd "$(dirname "$0")"
./mvnw -q -B package -DskipTests -pl quickstart -am
mkdir -p quickstart/target/tmp
exec java -Xmx1g -XX:MaxDirectMemorySize=512m \
  --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.util.zip=ALL-UNNAMED \
  --add-opens java.base/sun.net=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED \
  --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/jdk.internal.misc=ALL-UNNAMED \
  --add-opens java.base/jdk.internal.platform=ALL-UNNAMED --add-opens java.management/sun.management=ALL-UNNAMED \
  --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED -Dio.netty.tryReflectionSetAccessible=true \
  -Djava.io.tmpdir=quickstart/target/tmp \
  -cp "quickstart/target/classes:$(cat quickstart/target/quickstart.classpath)" \
  dev.settle.quickstart.Quickstart "$@"
