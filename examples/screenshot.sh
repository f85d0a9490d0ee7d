#!/usr/bin/env bash
# The README's screenshot (docs/img/report.png): the demo's HTML report as it opens in a
# 1280 × 800 window, taken by headless Chromium. Run it again when the report's first screen
# changes. Needs chromium (Debian's package; tests/run installs it).
#
#   examples/screenshot.sh                 # builds the release binary if it is missing
#   HEADROOM=path/to/headroom examples/screenshot.sh
set -euo pipefail
cd "$(dirname "$0")/.."

bin="${HEADROOM:-target/release/headroom}"
# A release build: a debug build's generator may not keep the demo's rate, and the
# screenshot would show that verdict instead of the one people get.
[ -x "$bin" ] || cargo build --release --quiet
command -v chromium >/dev/null 2>&1 || { echo "needs chromium (apt-get install chromium)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin" demo --out "$work/run" >/dev/null
mkdir -p docs/img
# --no-sandbox: Chromium refuses to start as root with its sandbox (CI containers run as
# root). The virtual time budget lets the charts draw before the screenshot, on any machine.
chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
  --user-data-dir="$work/profile" --window-size=1280,800 --virtual-time-budget=10000 \
  --screenshot="$PWD/docs/img/report.png" "file://$work/run/report.html" 2>/dev/null
echo "wrote docs/img/report.png"
