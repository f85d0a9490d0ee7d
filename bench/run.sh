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

# k6 the same way (large: a few minutes the first time).
if [ ! -x "$PEERS/k6" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && go mod init k6build >/dev/null 2>&1 \
     && go get go.k6.io/k6@latest >/dev/null 2>&1 \
     && go build -o "$OLDPWD/$PEERS/k6" go.k6.io/k6) || echo "k6 could not be built; its rows will say so"
  rm -rf "$tmp"
fi
# Locust from PyPI.
command -v locust >/dev/null 2>&1 || pip install -q locust >/dev/null 2>&1 || echo "locust could not be installed"

cargo build --release >/dev/null 2>&1
exec python3 bench/bench.py "$@"
