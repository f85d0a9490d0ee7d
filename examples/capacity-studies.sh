#!/usr/bin/env bash
# The capacity studies of seeds 001 and 003, run against the servers of servers.sh; their
# reports (markdown and self-contained HTML) and plots (PNG, SVG) are written to docs/.
#   001: TLS ended at the balancer (plain HTTP to the instance), on the instance, and on the
#        instance with client-certificate verification: a rate ladder and a capacity search
#        for each, the ladders compared side by side.
#   003: mutual TLS, users stepped 1..120 with 500 requests per step, against one and two
#        instances of 2,000 req/s each (5 ms a request): the headroom plots compared.
# nginx is pinned to core 0 and headroom to core 1 (as bench/ does), so neither takes the
# other's CPU. Usage: examples/capacity-studies.sh [--quick] [001|003|all]
#        examples/capacity-studies.sh render .run/studies/STAMP   (the docs again, from stored runs)
# --quick: coarse ladders and short steps (a few minutes in all, against the half hour of the
# full studies), reports written beside the runs instead of docs/: for trying the script.
# PORT_BASE: the servers' ports (ports.sh).
set -euo pipefail
CALLER="$PWD"
cd "$(dirname "$0")"
source ./ports.sh
QUICK=0
if [ "${1:-}" = --quick ]; then QUICK=1; shift; fi
HEADROOM="${HEADROOM:-$PWD/../target/release/headroom}"
[ -x "$HEADROOM" ] || (cd .. && cargo build --release)
# Relative to examples/, as headroom stores the command line with the run.
RUNS=".run/studies/$(date -u +%Y%m%dT%H%M%SZ)"
DOCS="$PWD/../docs"
# The ladders: users (003) and rates (001), full or quick.
USERS=(--concurrency 1..120 --step 1 --step-requests 500)
RATES=(--rate 2500..50000 --step 2500 --step-duration 3s --warmup 1s)
SEARCH=(--start 2000 --window 5s --warmup 2s)
if [ "$QUICK" = 1 ]; then
  USERS=(--concurrency 1..61 --step 5 --step-requests 1000)
  RATES=(--rate 2500..20000 --step 5000 --step-duration 1s --warmup 1s)
  SEARCH=(--start 2000 --max 8000 --precision 10% --window 5s --warmup 1s --confirm 10s)
  DOCS="$RUNS/docs"
fi
if [ "${1:-}" = render ]; then RUNS="$(cd "$CALLER" && cd "${2:?give the studies directory}" && pwd)"; fi
mkdir -p "$RUNS"

PIN=()
hr() { "${PIN[@]}" "$HEADROOM" "$@"; }
servers() {
  started=0
  if [ ! -f "$SERVERS/nginx.pid" ]; then ./servers.sh start; started=1; fi
  cleanup() { if [ "$started" = 1 ]; then ./servers.sh stop; fi; }
  trap cleanup EXIT
  NGINX="$(cat "$SERVERS/nginx.pid")"
  if [ "$(nproc)" -ge 2 ]; then
    taskset -pc 0 "$NGINX" >/dev/null
    PIN=(taskset -c 1)
  fi
}

# Reports and plots of stored runs: a run's page and markdown, or a search's.
page() { hr report "$1" --format html -o "$2.html" && hr report "$1" --format markdown > "$2.md"; }

study_003() {
  for n in 1-instance 2-instances; do
    echo "== 003: $n, 1..120 users, 500 requests per step" >&2
    hr sweep --scenario "003-capacity-$n.yaml" "${USERS[@]}" \
      --monitor-pid "$NGINX" -q --out "$RUNS/003-$n" > /dev/null
  done
}

render_003() {
  # The same runs as seed 003's reproduction (seed.sh 003): the same pages, in its folder.
  local out="$DOCS/seed-003"
  mkdir -p "$out"
  for n in 1-instance 2-instances; do page "$RUNS/003-$n" "$out/$n"; done
  hr compare "$RUNS/003-1-instance" "$RUNS/003-2-instances" --labels "1 instance,2 instances" \
    --format html -o "$out/compare.html" --plots "$out/plots"
  hr compare "$RUNS/003-1-instance" "$RUNS/003-2-instances" --labels "1 instance,2 instances" \
    --format markdown > "$out/compare.md"
}

study_001() {
  for v in balancer tls mtls; do
    echo "== 001: $v, rate ladder" >&2
    hr sweep --scenario "001-capacity-$v.yaml" "${RATES[@]}" \
      --stop-when "errors > 5%, p99 > 1s" --monitor-pid "$NGINX" -q \
      --out "$RUNS/001-$v-sweep" > /dev/null
    echo "== 001: $v, capacity search" >&2
    hr capacity --scenario "001-capacity-$v.yaml" --slo "p99 < 10ms, errors < 0.1%" "${SEARCH[@]}" \
      --monitor-pid "$NGINX" -q --out "$RUNS/001-$v-capacity" > /dev/null
  done
}

render_001() {
  local out="$DOCS/001-tls-termination"
  mkdir -p "$out"
  for v in balancer tls mtls; do
    page "$RUNS/001-$v-sweep" "$out/$v-sweep"
    page "$RUNS/001-$v-capacity" "$out/$v-capacity"
  done
  local runs=("$RUNS/001-balancer-sweep" "$RUNS/001-tls-sweep" "$RUNS/001-mtls-sweep")
  hr compare "${runs[@]}" --labels "TLS at the balancer,TLS on the instance,mutual TLS on the instance" \
    --format html -o "$out/compare.html" --plots "$out/plots"
  hr compare "${runs[@]}" --labels "TLS at the balancer,TLS on the instance,mutual TLS on the instance" \
    --format markdown > "$out/compare.md"
}

# The runs' stored command lines without this machine's paths and PIDs.
scrub() { python3 scrub-runs.py "$RUNS" "$PWD" NGINX; }

case "${1:-all}" in
  001) servers; study_001; scrub; render_001 ;;
  003) servers; study_003; scrub; render_003 ;;
  all) servers; study_003; study_001; scrub; render_003; render_001 ;;
  render) scrub; [ -d "$RUNS/003-1-instance" ] && render_003; [ -d "$RUNS/001-tls-sweep" ] && render_001 ;;
  *) echo "usage: $0 [--quick] [001|003|all] | render STUDIES_DIR" >&2; exit 2 ;;
esac
echo "runs in $RUNS, reports in $DOCS" >&2
