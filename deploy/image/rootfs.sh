#!/bin/sh
# Assembles the image's root file system at image build, on the build image: the shared libraries the Java runtime
# made by jlink links (and those the Pulsar client's Netty transport loads at run time), a POSIX shell for the
# `settle` command and `RUN` steps, the runtime user, and the directories the runtime writes. Nothing else: no
# package manager, no coreutils. Usage: rootfs.sh <jre directory> <root directory to fill>
set -eu
jre=$1
root=$2
mkdir -p "$root/bin" "$root/etc/settle" "$root/tmp" "$root/usr/local/bin" "$root/opt/settle/lib" \
  "$root/opt/settle/handlers" "$root/nonexistent"
chmod 1777 "$root/tmp"
rmdir "$root/nonexistent"

# Every library a binary of the runtime needs, found by the dynamic linker of the build image. The AWT libraries
# (java.desktop, which the YAML and HTTP libraries reference for java.beans) are never loaded headless: their X11
# and font libraries are left out. libdl, libpthread and librt: the Netty epoll transport the Pulsar client extracts
# and loads at run time links them (without them it falls back to NIO).
shell=$(readlink -f /bin/sh)
libraries=$(
  for binary in "$jre"/bin/* "$jre"/lib/*.so "$jre"/lib/*/*.so "$shell"; do
    case $binary in *awt* | *fontmanager* | *javajpeg* | *lcms* | *mlib* | *splashscreen* | *jsound*) continue ;; esac
    ldd "$binary" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
  done
  for extra in libdl.so.2 libpthread.so.0 librt.so.1; do
    ldconfig -p | awk -v name="$extra" '$1 == name && $NF ~ /^\// {print $NF; exit}'
  done
)
for library in $(printf '%s\n' "$libraries" | sort -u); do
  mkdir -p "$root$(dirname "$library")"
  cp -L "$library" "$root$library"
done
missing=$(for binary in "$jre/bin/java" "$jre/lib/server/libjvm.so"; do ldd "$binary" | grep 'not found' || true; done)
[ -z "$missing" ] || { echo "rootfs.sh: the Java runtime links libraries the build image lacks: $missing" >&2; exit 1; }
cp -L "$shell" "$root/bin/sh"

# The runtime user: a fixed numeric id, so Kubernetes can verify runAsNonRoot; the chart's podSecurityContext uses
# the same ids. It owns only the handler directory.
cat > "$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
settle:x:10001:10001:Settle:/nonexistent:/bin/false
PASSWD
cat > "$root/etc/group" <<'GROUP'
root:x:0:
settle:x:10001:
GROUP
# Host names from /etc/hosts (which the container runtime writes) before DNS, as a Debian base does.
printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$root/etc/nsswitch.conf"
chown 10001:10001 "$root/opt/settle/handlers"
