#!/usr/bin/env bash
# Benchmark headroom against its peers, side by side, on one nginx on loopback.
# nginx is pinned to core 0 and every generator to core 1. Results: bench/RESULTS.md.
# Usage: bench/run.sh [--quick]   (--quick: 3 s runs, for checking the script itself)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/out
PEERS=$OUT/peers
mkdir -p "$PEERS"

export DEBIAN_FRONTEND=noninteractive
need_apt=()
for pkg in nginx wrk time openssl; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# oha from crates.io (--locked: its newest dependencies may need a newer rustc than ours).
[ -x "$PEERS/bin/oha" ] || cargo install oha --locked --root "$PEERS" >/dev/null 2>&1

# vegeta: `go install …@latest` is refused by the module proxy here; a throwaway module works.
if [ ! -x "$PEERS/vegeta" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && go mod init vegetabuild >/dev/null 2>&1 \
     && go get github.com/tsenart/vegeta/v12@v12.12.0 >/dev/null 2>&1 \
     && go build -o "$OLDPWD/$PEERS/vegeta" github.com/tsenart/vegeta/v12)
  rm -rf "$tmp"
fi

cargo build --release >/dev/null 2>&1
exec python3 bench/bench.py "$@"
