#!/usr/bin/env sh
# The quickstart: builds what it needs, then runs a real Pulsar broker, Settle with the orders example, and a
# stream of sample orders, all in one JVM. Ctrl-C stops everything. Files stay under */target/.
set -eu
cd "$(dirname "$0")"
./mvnw -q -B package -DskipTests -pl quickstart -am
mkdir -p quickstart/target/tmp
exec java -Xmx1g -XX:MaxDirectMemorySize=512m \
  @test-broker/broker-jvm.args \
  -Djava.io.tmpdir=quickstart/target/tmp \
  -cp "quickstart/target/classes:$(cat quickstart/target/quickstart.classpath)" \
  dev.settle.quickstart.Quickstart "$@"
