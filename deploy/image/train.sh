#!/bin/sh
# The training run at image build: `settle validate` and a short `settle run` (against no broker) record the classes
# they load; one static AppCDS archive of them all is then dumped to /opt/settle/settle.jsa. Static rather than
# -XX:ArchiveClassesAtExit because two runs feed one archive, and because it does not need the JVM to exit cleanly.
set -eu
dir=$1
work=$(mktemp -d)
cat > "$work/manifest.yaml" <<MANIFEST
pulsar:
  # Nothing listens here: the run gets as far as connecting, which is what start-up loads.
  serviceUrl: pulsar://127.0.0.1:9
http:
  port: 0
  bindAddress: 127.0.0.1
subscriptions:
  - name: training
    topics: [persistent://public/default/training]
    type: Shared
    handler: dev.settle.examples.orders.OrderHandler
    jar: $dir/examples/settle-examples.jar
MANIFEST
cp=$(sed 's/^-cp //' "$dir/classpath.args")
main=dev.settle.runtime.cli.Main
java -XX:DumpLoadedClassList="$work/validate.classes" -cp "$cp" $main validate "$work/manifest.yaml"
# The client retries until its operation timeout (30 s); once it has tried to connect, start-up has loaded what
# it loads, so stop it there (SIGTERM: the runtime's own stop path is recorded too).
java -XX:DumpLoadedClassList="$work/run.classes" -cp "$cp" $main run "$work/manifest.yaml" > "$work/run.log" 2>&1 &
pid=$!
tries=0
until grep -q 'Failed to open connection' "$work/run.log"; do
  tries=$((tries + 1))
  if [ $tries -gt 300 ] || ! kill -0 $pid 2>/dev/null; then
    cat "$work/run.log" >&2
    echo "train.sh: the training run did not get as far as connecting to Pulsar" >&2
    exit 1
  fi
  sleep 0.1
done
kill -TERM $pid
wait $pid || true
# Each line once, in first-seen order: the two lists share most classes, and a lambda-proxy line listed twice
# crashes the JDK 17 dump (SIGSEGV in SystemDictionaryShared::adjust_lambda_proxy_class_dictionary).
awk '!seen[$0]++' "$work/validate.classes" "$work/run.classes" > "$work/all.classes"
java -Xshare:dump -XX:SharedClassListFile="$work/all.classes" -XX:SharedArchiveFile="$dir/settle.jsa" -cp "$cp" \
  -Xlog:cds=off -Xlog:cds+dynamic=off
rm -rf "$work"
