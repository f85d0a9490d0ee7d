#!/bin/sh
# Lays out the root file system of headroom's image in DIR (made anew): the binary, the
# shared libraries it links (as ldd lists them, at the same paths, so its interpreter and
# search paths hold), the CA certificates (where rustls-native-certs looks on Debian), the
# non-root user 65532 the pods run as, and /tmp and /runs for it to write to.
#
#   image/rootfs.sh BINARY DIR
#
# CA_BUNDLE names another bundle to install (default: this machine's).
# Run by the Dockerfile's build stage, or on a host whose libraries the image may carry
# (the container test does this: no registry is needed then).
set -eu
[ $# -eq 2 ] || { echo "usage: image/rootfs.sh BINARY DIR" >&2; exit 2; }
bin=$1
root=$2
bundle=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
[ -x "$bin" ] || { echo "image/rootfs.sh: $bin is not an executable" >&2; exit 1; }
[ -s "$bundle" ] || { echo "image/rootfs.sh: no CA bundle at $bundle (apt-get install ca-certificates)" >&2; exit 1; }

rm -rf "$root"
mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/tmp" "$root/runs"
cp "$bin" "$root/usr/local/bin/headroom"
# Each library ldd resolves ("name => /path (addr)") and the interpreter ("/path (addr)");
# the vDSO has no file.
ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u |
  while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
cp "$bundle" "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
chmod 1777 "$root/tmp"
