#!/usr/bin/env bash
# Checks that a plain `cargo test` passes on a machine with only Rust: runs it with every
# server and tool the lab tests drive hidden, in a network namespace of its own (loopback
# only), without root's capabilities, and with PATH reduced to the Rust toolchain and
# /usr/bin; then checks that the lab tests were listed as ignored with what they need.
#
# Needs root on Linux (unshare and bind mounts make the throwaway environment; nothing
# outside it changes). Arguments go to `cargo test` (e.g. `-- --test-threads 2`).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null || ! command -v setpriv >/dev/null; then
  echo "without-lab.sh builds its throwaway environment with unshare and setpriv (util-linux), as root: run it as root on Linux" >&2
  exit 1
fi

cargo=$(command -v cargo)
# Everything the build needs is fetched here; inside there is no network.
"$cargo" fetch --quiet

# What the lab tests start, found where they look for it (PATH, fixed paths, caches).
hide=()
for tool in nginx etcd etcdctl chromium chromium-browser google-chrome prometheus influxd influx \
    podman runc crun kube-score kubernetes-validate busybox jq xmllint taskset node npm go ip \
    python3; do
  while read -r path; do hide+=("$path"); done < <(type -ap "$tool" 2>/dev/null || true)
done
for path in /usr/sbin/nginx /usr/local/sbin/nginx /usr/bin/nginx /usr/bin/time /usr/bin/python3 \
    /usr/lib/nginx/modules /usr/lib/python3/dist-packages/yaml /usr/local/go \
    "$HOME/.cache/headroom" "$HOME/.cache/headroom-tests" "$HOME/.pyenv"; do
  [ -e "$path" ] && hide+=("$path")
done

log=$(mktemp)
empty_dir=$(mktemp -d)
trap 'rm -f "$log"; rmdir "$empty_dir"' EXIT

# Inside: loopback up, then each path hidden (an empty directory over a directory, /dev/null
# over a file: it cannot be run), then root's capabilities dropped and the environment
# cleared, so a test that needs root, a server or a tool fails here instead of passing.
inner='
  set -euo pipefail
  ip link set lo up
  while IFS= read -r path; do
    if [ -d "$path" ]; then mount --bind "$EMPTY_DIR" "$path"; else mount --bind /dev/null "$path"; fi
  done <<<"$HIDE"
  exec setpriv --inh-caps=-all --bounding-set=-all -- \
    env -i HOME="$HOME" PATH="$(dirname "$CARGO"):/usr/bin:/bin" \
    CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}" \
    TERM=dumb "$CARGO" test --offline "$@"
'
status=0
HIDE=$(printf '%s\n' "${hide[@]}") EMPTY_DIR="$empty_dir" CARGO="$cargo" \
  unshare --mount --net --propagation private -- bash -c "$inner" inner "$@" 2>&1 \
  | tee "$log" || status=$?

if [ "$status" -ne 0 ]; then
  echo "without-lab.sh: cargo test failed without the lab (exit $status): a test above needs something only tests/run gives; mark it with #[cfg_attr(not(feature = \"lab\"), ignore = \"needs …: run tests/run\")]" >&2
  exit "$status"
fi
ignored=$(grep -c ' \.\.\. ignored, needs ' "$log" || true)
unexplained=$(grep ' \.\.\. ignored$' "$log" || true)
# Only a whole run must meet lab tests; one filtered to a few may not.
if [ "$ignored" -eq 0 ] && [ $# -eq 0 ]; then
  echo "without-lab.sh: no lab test was listed as ignored with what it needs" >&2
  exit 1
fi
if [ -n "$unexplained" ]; then
  echo "without-lab.sh: tests ignored without saying what they need:" >&2
  echo "$unexplained" >&2
  exit 1
fi
echo "without-lab.sh: cargo test passed without the lab; $ignored lab tests listed as ignored with what they need (hidden: ${#hide[@]} paths)"
