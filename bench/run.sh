#!/usr/bin/env bash
# Benchmark headroom against its peers, side by side, on one nginx on loopback.
# nginx is pinned to core 0 and every generator to core 1. Results: bench/RESULTS.md.
# Usage: bench/run.sh [--quick] [--headroom PATH] [--baseline PATH] [--only ROWS]
#   --quick           3 s runs, 1 round: for checking the script itself
#   --headroom PATH   the headroom binary to measure (or HEADROOM_BIN=PATH); without either,
#                     target/release/headroom, built here first
#   --baseline PATH   a second headroom binary (or HEADROOM_BASELINE=PATH), run as the extra
#                     tool "headroom-before" in every row (a)-(f), paired round by round
#   --only ROWS       only these rows, e.g. --only ef (skips the headroom-only sections)
#   --raw-overhead    only row (a) with and without --raw, interleaved: CPU µs/req of each and
#                     the ratio (no peers installed or run); replaces that section of RESULTS.md
#   --push-overhead   only row (a) without --push, with --push prometheus=… to a real Prometheus
#                     and with --push influxdb=… to a real InfluxDB on loopback, interleaved:
#                     CPU µs/req of each and the ratios (no peers); replaces that section of
#                     RESULTS.md, the rest of the last full run's file kept
#   --live-overhead   only row (a) with and without --live (a page following its events),
#                     interleaved: CPU µs/req of each and the ratio (goal ≤ 1.05; no peers);
#                     replaces that section of RESULTS.md
# BENCH_PORT_OFFSET=N moves nginx's ports (18080, 18443-18446) by N, when something else holds them.
# Paths are taken from the repository root. Peers are installed once into bench/out/peers.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/out
PEERS=$OUT/peers
mkdir -p "$PEERS"

export DEBIAN_FRONTEND=noninteractive
need_apt=()
for pkg in nginx wrk time openssl nghttp2-client prometheus influxdb; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

raw_only=
for arg in "$@"; do
  case "$arg" in --raw-overhead|--push-overhead|--live-overhead) raw_only=yes ;; esac
done

# oha from crates.io (--locked: its newest dependencies may need a newer rustc than ours).
[ -n "$raw_only" ] || [ -x "$PEERS/bin/oha" ] || cargo install oha --locked --root "$PEERS" >/dev/null 2>&1

# vegeta: `go install …@latest` is refused by the module proxy here; a throwaway module works.
if [ -z "$raw_only" ] && [ ! -x "$PEERS/vegeta" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && go mod init vegetabuild >/dev/null 2>&1 \
     && go get github.com/tsenart/vegeta/v12@v12.12.0 >/dev/null 2>&1 \
     && go build -o "$OLDPWD/$PEERS/vegeta" github.com/tsenart/vegeta/v12)
  rm -rf "$tmp"
fi

# k6 the same way (large: a few minutes the first time).
if [ -z "$raw_only" ] && [ ! -x "$PEERS/k6" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && go mod init k6build >/dev/null 2>&1 \
     && go get go.k6.io/k6@latest >/dev/null 2>&1 \
     && go build -o "$OLDPWD/$PEERS/k6" go.k6.io/k6) || echo "k6 could not be built; its rows will say so"
  rm -rf "$tmp"
fi
# Locust from PyPI.
[ -n "$raw_only" ] || command -v locust >/dev/null 2>&1 || pip install -q locust >/dev/null 2>&1 || echo "locust could not be installed"

# Build headroom only when no binary is named (the release build's fat LTO takes minutes).
own_binary=${HEADROOM_BIN:-}
for arg in "$@"; do
  case "$arg" in --headroom|--headroom=*) own_binary=yes ;; esac
done
[ -n "$own_binary" ] || cargo build --release >/dev/null 2>&1
# Row (e)'s floor: the h2 crate alone (bench/h2_floor.rs).
[ -n "$raw_only" ] || cargo build --release --example h2_floor >/dev/null 2>&1 || echo "bench: h2_floor did not build; row (e) goes without it" >&2
exec python3 bench/bench.py "$@"
