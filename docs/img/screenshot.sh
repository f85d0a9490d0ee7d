#!/usr/bin/env bash
# Renders the README's screenshots. docs/img/report.png: a real sweep against the built-in
# target, its HTML report opened in headless Chromium at 1280 × 800 (the first screen a reader
# sees). Run it again whenever the HTML report changes: `docs/img/screenshot.sh`.
# Needs chromium (Debian's package; tests/run installs it) and builds headroom if needed.
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --release --quiet
headroom=$PWD/target/release/headroom
work=$(mktemp -d)
target_pid=
cleanup() {
  if [ -n "$target_pid" ]; then kill "$target_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A port of its own, so that a target already on 8080 (the README's tour) is left alone.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$headroom" target --listen "127.0.0.1:$port" --capacity 800 2>/dev/null &
target_pid=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done

"$headroom" sweep "http://127.0.0.1:$port/" --rate 200..1000 --step 200 --step-duration 3s \
  --warmup 1s --stop-when none --out "$work/sweep" -q >/dev/null || true
test -f "$work/sweep/report.html" || { echo "the sweep wrote no report.html" >&2; exit 1; }

chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
  --user-data-dir="$work/profile" --virtual-time-budget=10000 --window-size=1280,800 \
  --screenshot="$PWD/docs/img/report.png" "file://$work/sweep/report.html" 2>/dev/null
echo "wrote docs/img/report.png"

# The live page's screenshot, docs/img/live.png: taken by the test that follows a live attack in
# Chromium (tests/integration/live.rs), six seconds into its run.
HEADROOM_SCREENSHOTS=1 cargo test --quiet --features lab --test integration -- \
  live::the_live_page_changes_during_the_run_fits_and_becomes_the_report >/dev/null
echo "wrote docs/img/live.png"
