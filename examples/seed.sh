#!/usr/bin/env bash
# Each seed report of ../shared/seeds/ reproduced by one command, against the servers of
# servers.sh (started here when they are not running, and then stopped again):
#   [PORT_BASE=N] examples/seed.sh 000|001|002|003|004          (writes docs/seed-NNN/)
#   [PORT_BASE=N] [MAX_RATE=R] examples/seed.sh --quick NNN     (writes .run/quick/seed-NNN/)
#   examples/seed.sh [--quick] NNN render examples/.run/seeds/STAMP-NNN   (the pages again,
#                                                              from the stored runs)
# writes the seed's reports (markdown and self-contained HTML) beside a page (README.md)
# setting the seed's own table and headroom's row by row, under a conclusion computed from
# the runs: the seed's numbers quoted from its text, headroom's from the generated markdown
# and JSON (seed-page.py). The runs themselves stay in examples/.run/seeds/.
# --quick shortens every stage (ramps, steady states, steps) to seconds so a seed takes a few
# minutes, and writes under examples/.run/quick/ only: the committed docs/ come from full runs.
# MAX_RATE (with --quick only) cuts every rate above it from seed 001's ladder (the only seed
# offering more than 500 req/s); the page says which rates were cut. PORT_BASE: ports.sh.
set -euo pipefail
CALLER="$PWD"
cd "$(dirname "$0")"
source ./ports.sh
die() { echo "seed.sh: $*" >&2; exit 2; }
QUICK=0 SEED="" RENDER=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    render) RENDER="$(cd "$CALLER" && cd "${2:?give the runs directory}" && pwd)"; shift ;;
    *) SEED="$1" ;;
  esac
  shift
done
case "$SEED" in
  000 | 001 | 002 | 003 | 004) ;;
  *) echo "usage: [PORT_BASE=N] [MAX_RATE=R] $0 [--quick] 000|001|002|003|004 [render RUNS]" >&2; exit 2 ;;
esac
MODE=full
[ "$QUICK" = 1 ] && MODE=quick
if [ -n "$RENDER" ]; then
  # The stored runs say how they were made: a quick run never renders into docs/.
  [ -f "$RENDER/seed.env" ] || die "$RENDER has no seed.env: not runs of seed.sh"
  RUN_MODE="" RUN_MAX_RATE="" RUN_DURATIONS=""
  # shellcheck source=/dev/null
  source "$RENDER/seed.env"
  if [ "$RUN_MODE" != "$MODE" ]; then
    how="without --quick"
    [ "$RUN_MODE" = quick ] && how="with --quick"
    die "$RENDER holds a $RUN_MODE run: render it $how"
  fi
  MAX_RATE="$RUN_MAX_RATE"
fi
if [ -n "${MAX_RATE:-}" ]; then
  [ "$QUICK" = 1 ] || die "MAX_RATE caps --quick runs only (a full run writes docs/ with the seed's rates)"
  [[ "$MAX_RATE" =~ ^[1-9][0-9]*$ ]] || die "MAX_RATE=$MAX_RATE is not a whole number of req/s"
fi
# Seeds 000 and 002 offer the rates of their scenario files (at most 50 and 500 req/s), which
# seed.sh does not change: a cap below them is refused rather than broken.
case "$SEED" in 000) top=50 ;; 002) top=500 ;; *) top=0 ;; esac
if [ -n "${MAX_RATE:-}" ] && [ "$MAX_RATE" -lt "$top" ]; then
  die "seed $SEED offers up to $top req/s, above MAX_RATE=$MAX_RATE; give at least $top"
fi
HEADROOM="${HEADROOM:-$PWD/../target/release/headroom}"
[ -x "$HEADROOM" ] || (cd .. && cargo build --release)
# Relative to examples/, as headroom stores the command line with the run.
RUNS=".run/seeds/$(date -u +%Y%m%dT%H%M%SZ)-$SEED"
[ -n "$RENDER" ] && RUNS="$RENDER"
if [ "$QUICK" = 1 ]; then
  DOCS="$PWD/.run/quick/seed-$SEED"
  rm -rf "$DOCS"
else
  DOCS="$PWD/../docs/seed-$SEED"
fi
# The seed reports: SEEDS, or shared/seeds beside the repository (or beside its worktrees).
if [ -z "${SEEDS:-}" ]; then
  for d in ../../shared/seeds ../../../shared/seeds; do [ -d "$d" ] && SEEDS="$(cd "$d" && pwd)" && break; done
fi
[ -n "${SEEDS:-}" ] || die "set SEEDS to the directory of the seed reports (NNN_*.txt)"
mkdir -p "$RUNS" "$DOCS"
FULL="examples/seed.sh $SEED"

hr() { "$HEADROOM" "$@"; }
# A run whose objectives were not met exits with 3: its report is still the evidence.
judged() { "$@" || [ $? = 3 ]; }

servers() {
  started=0
  if [ ! -f "$SERVERS/nginx.pid" ]; then ./servers.sh start; started=1; fi
  cleanup() { if [ "$started" = 1 ]; then ./servers.sh stop; fi; }
  trap cleanup EXIT
  NGINX="$(cat "$SERVERS/nginx.pid")"
  ETCD="$(cat "$SERVERS/etcd.pid")"
}

# The seed's side-by-side page, from the seed's text, the generated markdown and the runs'
# JSON; DURATIONS says what the stages lasted in this run, CUT which rates MAX_RATE cut.
page() {
  HEADROOM="$HEADROOM" python3 seed-page.py "$SEED" "$SEEDS" "$DOCS" "$MODE" "$FULL" "$DURATIONS" "$RUNS" \
    "${MAX_RATE:-}" "${CUT:-}" > "$DOCS/README.md.new"
  mv "$DOCS/README.md.new" "$DOCS/README.md"
}
# The runs' stored command lines without this machine's paths and PIDs (scrub-runs.py),
# named after the servers each seed watches.
case "$SEED" in 000) MONITORED=NGINX,ETCD ;; 001 | 003) MONITORED=NGINX ;; *) MONITORED=ETCD ;; esac
scrub() { python3 scrub-runs.py "$RUNS" "$PWD" "$MONITORED"; }
# A stored run's (or matrix's) report, in markdown and HTML.
render() { hr report "$1" --format markdown > "$2.md" && hr report "$1" --format html -o "$2.html"; }

# Each seed: what its stages last (durations_), its runs (run_), its pages (render_).
durations_000() {
  # The seed's steady states are 5, 30 and 120 minutes, each after a one-minute ramp.
  if [ "$QUICK" = 1 ]; then export RAMP=3s STEADY_5=5s STEADY_30=10s STEADY_120=20s; fi
  DURATIONS="ramp ${RAMP:-1m}; steady states ${STEADY_5:-5m}, ${STEADY_30:-30m} and ${STEADY_120:-120m} (the seed's 5, 30 and 120 min)"
}
run_000() {
  echo "== 000: the secrets, written once" >&2
  hr run 002-kv-fill.yaml --set data.perf256.generate.keys=1000 \
    --set data.perf256.generate.prefix=secret- --set load.requests=1000 -q --out "$RUNS/fill" > /dev/null
  echo "== 000: the seed's 24 rows, gate and store watched" >&2
  judged hr run 000-secrets-service-matrix.yaml --monitor-pid "$NGINX,$ETCD" -q \
    --out "$RUNS/matrix" > /dev/null
}
render_000() { render "$RUNS/matrix" "$DOCS/report"; }

RATES_001=1000,2000,3000,3200,3300,3500,3800,3900,5000,10000,15000,20000
VARIANTS_001=(balancer tls mtls)
LABELS_001="TLS at the balancer,TLS on the instance,mutual TLS on the instance"
durations_001() {
  # The seed's rates, 60 s each (vegeta -duration=60s), for the three ways to end TLS; with
  # MAX_RATE, those above it are cut (CUT).
  STEPS=(--step-duration 60s --warmup 2s)
  # Quick: 3 s, as a step's verdict needs 2 whole seconds measured.
  if [ "$QUICK" = 1 ]; then STEPS=(--step-duration 3s --warmup 1s); fi
  RATES="$RATES_001" CUT=""
  if [ -n "${MAX_RATE:-}" ]; then
    RATES=""
    local r
    for r in ${RATES_001//,/ }; do
      if [ "$r" -le "$MAX_RATE" ]; then RATES="$RATES${RATES:+,}$r"; else CUT="$CUT${CUT:+,}$r"; fi
    done
    [ -n "$RATES" ] || die "MAX_RATE=$MAX_RATE is below every rate of seed 001 (from ${RATES_001%%,*} req/s)"
  fi
  DURATIONS="steps of ${STEPS[1]} after ${STEPS[3]} of warm-up at $RATES req/s (the seed's 60 s per rate)"
  [ -z "$CUT" ] || DURATIONS="$DURATIONS; the seed's $CUT req/s not run (above MAX_RATE=$MAX_RATE)"
}
run_001() {
  for v in "${VARIANTS_001[@]}"; do
    echo "== 001: $v, the seed's rates" >&2
    hr sweep --scenario "001-capacity-$v.yaml" --rate "$RATES" "${STEPS[@]}" \
      --monitor-pid "$NGINX" -q --out "$RUNS/$v" > /dev/null
  done
}
render_001() {
  for v in "${VARIANTS_001[@]}"; do render "$RUNS/$v" "$DOCS/$v"; done
  local runs=("$RUNS/balancer" "$RUNS/tls" "$RUNS/mtls")
  hr compare "${runs[@]}" --labels "$LABELS_001" --format markdown > "$DOCS/compare.md"
  hr compare "${runs[@]}" --labels "$LABELS_001" --format html -o "$DOCS/compare.html"
}

durations_002() {
  # The seed's Gatling ramp was 600 s of its 900 s.
  if [ "$QUICK" = 1 ]; then export RAMP=5s STEADY=15s; fi
  DURATIONS="ramp ${RAMP:-10m}, then ${STEADY:-5m} steady (the seed's 600 s ramp of 900 s)"
}
run_002() {
  local keys="${KEYS:-10000}"
  echo "== 002: fill, $keys keys of 256 B (perf256-) and of 5 KB (perf5k-)" >&2
  local size=(--set "data.perf256.generate.keys=$keys" --set "load.requests=$keys")
  hr run 002-kv-fill.yaml "${size[@]}" -q --out "$RUNS/fill-256" > /dev/null
  hr run 002-kv-fill.yaml "${size[@]}" --set data.perf256.generate.value_bytes=5120 \
    --set data.perf256.generate.prefix=perf5k- -q --out "$RUNS/fill-5k" > /dev/null
  echo "== 002: get one and get many at 100 and 250 req/s, 256 B and 5 KB" >&2
  KEYS="$keys" judged hr run 002-kv-matrix.yaml --monitor-pid "$ETCD" -q --out "$RUNS/matrix" > /dev/null
}
render_002() { render "$RUNS/matrix" "$DOCS/report"; }

INSTANCES_003=(1-instance 2-instances)
durations_003() {
  # As capacity-studies.sh 003: 1..120 users, 500 requests per step, 1 and 2 instances.
  # Quick: coarser steps, still a few below each knee (about 10 users an instance), and at
  # least 10 requests per user in every step, so Little's law is checked on each.
  USERS=(--concurrency 1..120 --step 1 --step-requests 500)
  if [ "$QUICK" = 1 ]; then USERS=(--concurrency 1..61 --step 5 --step-requests 1000); fi
  DURATIONS="users ${USERS[1]} in steps of ${USERS[3]}, ${USERS[5]} requests per step (the seed's 1..60 by 1, 500 per step)"
}
run_003() {
  for n in "${INSTANCES_003[@]}"; do
    echo "== 003: $n" >&2
    hr sweep --scenario "003-capacity-$n.yaml" "${USERS[@]}" --monitor-pid "$NGINX" --raw -q \
      --out "$RUNS/$n" > /dev/null
  done
}
render_003() {
  for n in "${INSTANCES_003[@]}"; do
    render "$RUNS/$n" "$DOCS/$n"
    # Every request's record, for the seed's own plotting scripts.
    hr export "$RUNS/$n" --format csv | gzip -9n > "$DOCS/$n.csv.gz"
  done
  local labels="1 instance,2 instances"
  hr compare "$RUNS/1-instance" "$RUNS/2-instances" --labels "$labels" --format markdown > "$DOCS/compare.md"
  hr compare "$RUNS/1-instance" "$RUNS/2-instances" --labels "$labels" --format html \
    -o "$DOCS/compare.html" --plots "$RUNS/compare-plots" > /dev/null
  # The headroom plots (mean and percentiles per step, each run's; both runs' p99 together).
  mkdir -p "$DOCS/plots"
  for n in "${INSTANCES_003[@]}"; do
    hr report "$RUNS/$n" --plots "$RUNS/$n/plots" > /dev/null
    cp "$RUNS/$n/plots/headroom.png" "$DOCS/plots/$n-headroom.png"
  done
  cp "$RUNS/compare-plots/compare-headroom.png" "$DOCS/plots/"
}

durations_004() {
  # 10, 30 and 50 users, 180 s each, in one run.
  EACH=3m
  [ "$QUICK" = 1 ] && EACH=10s
  DURATIONS="10, 30 and 50 users, $EACH each (the seed's 180 s)"
}
run_004() {
  echo "== 004: key lifecycle at 10, 30 and 50 users" >&2
  local s=""
  for u in 10 30 50; do s="$s${s:+, }{name: $u users, users: $u, duration: $EACH}"; done
  judged hr run 004-key-lifecycle.yaml --monitor-pid "$ETCD" -q --out "$RUNS/run" --stages "[$s]" > /dev/null
}
render_004() {
  render "$RUNS/run" "$DOCS/report"
  # Latency by percentile per operation, over the run and per user level.
  hr report "$RUNS/run" --plots "$RUNS/run/plots" > /dev/null
  mkdir -p "$DOCS/plots"
  cp "$RUNS/run/plots/latency-by-percentile.png" "$RUNS/run/plots/latency-by-percentile-by-stage.png" \
    "$RUNS"/run/plots/latency-by-percentile-stage-[0-9].png "$DOCS/plots/"
}

"durations_$SEED"
if [ -z "$RENDER" ]; then
  # How the runs are made, for rendering them again (and never a quick run into docs/).
  printf 'RUN_MODE=%q\nRUN_MAX_RATE=%q\nRUN_DURATIONS=%q\n' "$MODE" "${MAX_RATE:-}" "$DURATIONS" \
    > "$RUNS/seed.env"
  servers
  "run_$SEED"
else
  DURATIONS="${RUN_DURATIONS:-$DURATIONS}"
fi
scrub
"render_$SEED"
page
echo "runs in examples/${RUNS#"$PWD/"}, pages in $DOCS" >&2
