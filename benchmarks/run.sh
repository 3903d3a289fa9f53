#!/usr/bin/env sh
# The benchmarks (docs/benchmarks.md): builds what they need, then runs the harness in a plain JVM, which starts a
# real Pulsar broker in-process and each measured consumer in a child JVM of its own, and prints a Markdown table.
# Without arguments, the full protocol (about 40-60 minutes on 2 cores); --quick the message-path drains in under 10;
# --compare <git ref> Settle built at the ref against this tree's; --smoke tiny counts (what ./mvnw verify -Preliability runs);
# --profile a JFR profile of the in-process broker over each drain, its hottest frames printed under the drain's line.
set -eu
cd "$(dirname "$0")/.."
./mvnw -q -B package -DskipTests -pl benchmarks -am
mkdir -p benchmarks/target/tmp
exec java -Xmx1g -XX:MaxDirectMemorySize=512m \
  @test-broker/broker-jvm.args \
  -Djava.io.tmpdir=benchmarks/target/tmp \
  -cp "benchmarks/target/classes:$(cat benchmarks/target/benchmarks.classpath)" \
  dev.settle.benchmarks.Benchmarks "$@"
