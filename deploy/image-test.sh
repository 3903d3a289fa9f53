#!/usr/bin/env bash
# Builds the Dockerfile without a Docker engine and checks the image it makes; .ci/run runs it after Maven.
#
#  1. a Debian base with a Java 17 runtime, made by debootstrap (cached under target/image-test/ by its package
#     list and mirror), stands in for the Dockerfile's default BASE_IMAGE, which no registry here can serve;
#  2. buildah builds the Dockerfile on it: the production image (default target) and the examples target;
#  3. the production image: runs as 10001:10001, exec-form entrypoint, no example JAR, the class-data archive
#     present and used;
#  4. inside the examples image: `settle validate` on a manifest, then `settle run` against the embedded broker on
#     the host's loopback: one message handled, then SIGTERM, drain, exit 0 within the grace period.
#
# Needs: Linux, root, Debian (it installs buildah and debootstrap itself), and the Maven build's output
# (runtime/target/image/, examples/target/settle-examples.jar, quickstart/target/). Anything else: it says why it
# skips and exits 0. SETTLE_IMAGE_TEST=require makes a skip an error.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

skip() {
  echo "image test skipped because $*"
  if [ "${SETTLE_IMAGE_TEST:-}" = require ]; then exit 1; fi
  exit 0
}
step() { printf '\n== image test: %s\n' "$*"; }
fail() { echo "image test FAILED: $*" >&2; exit 1; }

[ "$(uname -s)" = Linux ] || skip "this is not Linux ($(uname -s)): buildah builds Linux images on Linux"
[ "$(id -u)" = 0 ] || skip "it is not running as root (buildah --isolation chroot and debootstrap need root)"
[ -f /etc/debian_version ] || skip "this is not Debian (it installs buildah and debootstrap with apt-get)"
for built in runtime/target/image/lib runtime/target/settle-runtime-classes.jar examples/target/settle-examples.jar \
  quickstart/target/quickstart.classpath; do
  [ -e "$built" ] || fail "$built is missing: run ./mvnw -B -pl runtime,examples,quickstart -am package -DskipTests first"
done
if ! command -v buildah >/dev/null || ! command -v debootstrap >/dev/null; then
  step "installing buildah and debootstrap"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah debootstrap >/dev/null \
    || skip "apt-get could not install buildah and debootstrap"
fi

work=$root/target/image-test
mkdir -p "$work"
storage=(--root "$work/containers" --runroot "$work/run" --storage-driver vfs)
bh() { buildah "${storage[@]}" "$@"; }
containers=()
broker_pid=
cleanup() {
  for c in "${containers[@]}"; do bh rm "$c" >/dev/null 2>&1 || true; done
  if [ -n "$broker_pid" ]; then kill -TERM "$broker_pid" 2>/dev/null || true; wait "$broker_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

# --- 1. the base -------------------------------------------------------------------------------------------------
# The mirror this machine's apt uses (deb822 "URIs:" or one-line "deb"), for the Debian archive itself.
mirror=$( (cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true) \
  | awk '/^URIs:/ {print $2} /^deb / {for (i = 2; i <= NF; i++) if ($i !~ /^\[/) {print $i; break}}' \
  | grep -v -e security -e '^$' | grep '/debian/\?$' | head -n 1)
[ -n "$mirror" ] || fail "no Debian mirror in /etc/apt/sources.list*: debootstrap needs one"
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
packages=openjdk-17-jre-headless
key=$(printf '%s %s %s' "$suite" "$packages" "$mirror" | sha256sum | cut -c1-12)
base_tar=$work/base-$suite-$key.tar
base_image=localhost/settle-base:$suite-$key
step "base: Debian $suite with $packages from $mirror"
started=$(date +%s)
if [ ! -f "$base_tar" ]; then
  rootfs=$(mktemp -d "$work/rootfs.XXXX")
  debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log"; fail "debootstrap failed (log: $work/debootstrap.log)"; }
  # What apt downloaded or indexed is no part of an image.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/*
  tar -C "$rootfs" -cf "$base_tar.partial" . && mv "$base_tar.partial" "$base_tar"
  rm -rf "$rootfs"
  echo "debootstrap: $(( $(date +%s) - started )) s"
else
  echo "cached: $base_tar"
fi
if ! bh inspect --type image "$base_image" >/dev/null 2>&1; then
  c=$(bh from scratch); containers+=("$c")
  mnt=$(bh mount "$c")
  tar -C "$mnt" -xf "$base_tar"
  bh umount "$c" >/dev/null
  bh config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
  bh commit --quiet "$c" "$base_image" >/dev/null
fi
echo "base ready in $(( $(date +%s) - started )) s"

# --- 2. the build ------------------------------------------------------------------------------------------------
# Without --layers: buildah commits each stage once instead of every step, which on the vfs driver (a full copy
# of the file system per layer) is the difference between about one and about five minutes.
step "building the Dockerfile (BASE_IMAGE=$base_image)"
started=$(date +%s)
build=(bud --isolation chroot --build-arg "BASE_IMAGE=$base_image")
bh "${build[@]}" --target runtime -t localhost/settle-runtime:test . > "$work/build.log" 2>&1 \
  || { tail -40 "$work/build.log"; fail "buildah could not build the Dockerfile (log: $work/build.log)"; }
bh "${build[@]}" --target examples -t localhost/settle-runtime:test-examples . >> "$work/build.log" 2>&1 \
  || { tail -40 "$work/build.log"; fail "buildah could not build the examples target (log: $work/build.log)"; }
build_seconds=$(( $(date +%s) - started ))
size=$(bh images --format '{{.Size}}' localhost/settle-runtime:test | head -n 1)
echo "built in $build_seconds s; production image $size"

# --- 3. the production image -------------------------------------------------------------------------------------
step "checking the production image"
config=$(bh inspect --type image localhost/settle-runtime:test \
  | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["OCIv1"]["config"]))')
user=$(printf '%s' "$config" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("User", ""))')
[ "$user" = 10001:10001 ] || fail "the image runs as '$user', expected '10001:10001' (the chart's runAsUser)"
entrypoint=$(printf '%s' "$config" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin).get("Entrypoint")))')
case $entrypoint in
  '["java", '*) ;;
  *) fail "the entrypoint is $entrypoint: it must be exec form starting with java, so java is PID 1 and gets SIGTERM" ;;
esac
prod=$(bh from localhost/settle-runtime:test); containers+=("$prod")
mnt=$(bh mount "$prod")
examples_jars=$(find "$mnt" -name 'settle-examples*.jar' | sed "s|^$mnt||")
[ -z "$examples_jars" ] || fail "the production image carries example handlers: $examples_jars"
[ -s "$mnt/opt/settle/settle.jsa" ] || fail "the production image has no class-data archive at /opt/settle/settle.jsa"
bh umount "$prod" >/dev/null
# -Xshare:on refuses to start unless the archive maps; the class-load log says where each class came from.
shared=$(bh run --isolation chroot "$prod" -- sh -c \
  'exec java @/opt/settle/jvm.args -Xshare:on -Xlog:class+load=info @/opt/settle/classpath.args dev.settle.runtime.cli.Main --help' \
  2>&1 | grep -c 'dev.settle.runtime.*source: shared objects file' || true)
[ "$shared" -gt 0 ] || fail "the runtime's classes do not come from the class-data archive (-Xshare:on, -Xlog:class+load)"
echo "user $user, entrypoint $entrypoint, no example JAR, $shared runtime classes from the CDS archive"

# --- 4. validate and run inside the examples image ---------------------------------------------------------------
step "settle validate and settle run inside the image, against the embedded broker on the loopback"
rm -f "$work/service-url"
java -Xmx1g -XX:MaxDirectMemorySize=512m @test-broker/broker-jvm.args -Djava.io.tmpdir="$work" \
  -cp "quickstart/target/classes:$(cat quickstart/target/quickstart.classpath)" \
  dev.settle.quickstart.BrokerForImageTest "$work/service-url" > "$work/broker.log" 2>&1 &
broker_pid=$!
for _ in $(seq 1 600); do
  [ -s "$work/service-url" ] && break
  kill -0 "$broker_pid" 2>/dev/null || { cat "$work/broker.log"; fail "the embedded broker did not start"; }
  sleep 0.2
done
[ -s "$work/service-url" ] || { cat "$work/broker.log"; fail "the embedded broker did not start within 120 s"; }
service_url=$(cat "$work/service-url")
mkdir -p "$work/etc"
cat > "$work/etc/manifest.yaml" <<MANIFEST
pulsar:
  serviceUrl: $service_url
http:
  port: 0
  bindAddress: 127.0.0.1
subscriptions:
  - name: image-test
    topics: [persistent://public/default/orders]
    type: Shared
    handler: dev.settle.examples.orders.OrderHandler
    jar: /opt/settle/examples/settle-examples.jar
MANIFEST
chmod -R a+rX "$work/etc"
ex=$(bh from --quiet localhost/settle-runtime:test-examples); containers+=("$ex")
run_in_image() { bh run --isolation chroot -v "$work/etc:/etc/settle:ro" "$ex" -- "$@"; }
run_in_image java @/opt/settle/jvm.args @/opt/settle/classpath.args dev.settle.runtime.cli.Main \
  validate /etc/settle/manifest.yaml > "$work/validate.log" 2>&1 \
  || { cat "$work/validate.log"; fail "settle validate refused the manifest inside the image"; }
echo "validate: $(grep -c . "$work/validate.log") lines, exit 0"

# The image's own entrypoint and command, as Kubernetes runs it (buildah run does not apply the entrypoint).
launched=$(date +%s%N)
run_in_image java @/opt/settle/jvm.args @/opt/settle/classpath.args dev.settle.runtime.cli.Main \
  run /etc/settle/manifest.yaml > "$work/run.log" 2>&1 &
run_pid=$!
handled=
for _ in $(seq 1 600); do
  if grep -q 'Order image-test-1 hit a transient failure' "$work/run.log"; then handled=$(date +%s%N); break; fi
  kill -0 "$run_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$handled" ] || { cat "$work/run.log"; fail "settle run inside the image handled no message within 60 s"; }
echo "run: first message handled $(( (handled - launched) / 1000000 )) ms after launch (buildah run included)"
# The second attempt acks it; then stop the JVM as Kubernetes would, and time the drain.
sleep 1
java_pid=$(pgrep -f -n 'dev.settle.runtime.cli.Main run /etc/settle/manifest.yaml' || true)
[ -n "$java_pid" ] || { cat "$work/run.log"; fail "no java process of settle run to stop"; }
stopping=$(date +%s%N)
kill -TERM "$java_pid"
grace=30
status=0
timeout "$grace" tail --pid="$run_pid" -f /dev/null || fail "settle run did not exit within the ${grace} s grace period"
wait "$run_pid" || status=$?
stopped_ms=$(( ($(date +%s%N) - stopping) / 1000000 ))
[ "$status" = 0 ] || { tail -20 "$work/run.log"; fail "settle run exited $status after SIGTERM, expected 0"; }
grep -q 'stopped 1 subscriptions' "$work/run.log" || { tail -20 "$work/run.log"; fail "settle run did not drain and stop its subscription"; }
echo "SIGTERM: drained and exited 0 in $stopped_ms ms (grace ${grace} s)"

printf '\nimage test passed: build %s s, production image %s\n' "$build_seconds" "$size"
