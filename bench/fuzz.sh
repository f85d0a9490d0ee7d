#!/usr/bin/env bash
# Fuzz every cargo-fuzz target in fuzz/ for a given time each, one after the other, then print
# one summary line per target; exits non-zero when any target crashed (a panic, an OOM past
# its RSS limit, a timeout).
#
# Usage: bench/fuzz.sh [TIME] [TARGET...] [TARGET=TIME...]
#   TIME          time per target: 90 or 90s, 10m, 1h (default 60s)
#   TARGET        only these targets (default: all): scenario template url_header response
#                 chunked stored_run raw_export har curl openapi
#   TARGET=TIME   this target's own time, e.g. the two that read a server's bytes longer:
#                 bench/fuzz.sh 10m response=30m chunked=30m
# Environment: FUZZ_NICE (default 10; the fuzzer runs at this niceness, so tests beside it
# are not starved), FUZZ_JOBS (default 1: libFuzzer processes per target, -fork=N).
#
# Needs a nightly toolchain and cargo-fuzz (cargo install cargo-fuzz). Each target starts from
# its hand-made seeds in fuzz/seeds/TARGET (committed) and grows its corpus in
# fuzz/corpus/TARGET (not committed: fuzz/.gitignore). Crashes are written to
# fuzz/artifacts/TARGET/ (reproduce one with `cargo +nightly fuzz run TARGET FILE`, shrink it
# with `cargo +nightly fuzz tmin TARGET FILE`); each run's log is fuzz/logs/TARGET.log.
set -euo pipefail
cd "$(dirname "$0")/.."

ALL=(scenario template url_header response chunked stored_run raw_export har curl openapi)

# Per target: the longest input, the RSS limit (MiB; an allocation past it is a crash) and a
# dictionary. Inputs are small files and one server answer: anything bigger only slows the
# search. The response target itself feeds 1 MiB past KEEP_LIMIT when asked to.
declare -A MAX_LEN=([scenario]=8192 [template]=4096 [url_header]=1024 [response]=16384 [chunked]=16384 [stored_run]=16384 [raw_export]=16384 [har]=16384 [curl]=4096 [openapi]=16384)
declare -A RSS_MB=([scenario]=1024 [template]=1024 [url_header]=512 [response]=1024 [chunked]=512 [stored_run]=1024 [raw_export]=512 [har]=1024 [curl]=1024 [openapi]=1024)
declare -A DICT=([scenario]=fuzz/dicts/scenario.dict [response]=fuzz/dicts/http.dict [chunked]=fuzz/dicts/http.dict [stored_run]=fuzz/dicts/stored_run.dict [har]=fuzz/dicts/har.dict [curl]=fuzz/dicts/curl.dict [openapi]=fuzz/dicts/openapi.dict)

seconds() {
    case "$1" in
        *h) echo $((${1%h} * 3600)) ;;
        *m) echo $((${1%m} * 60)) ;;
        *s) echo "${1%s}" ;;
        *[!0-9]* | '') echo "bad time: $1 (write 90, 90s, 10m or 1h)" >&2; return 1 ;;
        *) echo "$1" ;;
    esac
}

default=60
if [[ $# -gt 0 && $1 =~ ^[0-9]+[smh]?$ ]]; then
    default=$(seconds "$1")
    shift
fi
declare -A TIME=()
targets=()
for arg in "$@"; do
    name=${arg%%=*}
    if [[ ! " ${ALL[*]} " =~ " $name " ]]; then
        echo "unknown target $name; targets: ${ALL[*]}" >&2
        exit 2
    fi
    if [[ $arg == *=* ]]; then
        TIME[$name]=$(seconds "${arg#*=}")
    else
        targets+=("$name")
    fi
done
[[ ${#targets[@]} -gt 0 ]] || targets=("${ALL[@]}")

nice=(nice -n "${FUZZ_NICE:-10}")
jobs=${FUZZ_JOBS:-1}
for t in "${targets[@]}"; do
    if ! build=$("${nice[@]}" cargo +nightly fuzz build "$t" 2>&1); then
        tail -n 20 <<<"$build" >&2
        echo "fuzz target $t does not build (cargo +nightly fuzz build $t)" >&2
        exit 2
    fi
done

mkdir -p fuzz/logs
summary=()
failed=0
for t in "${targets[@]}"; do
    secs=${TIME[$t]:-$default}
    corpus=fuzz/corpus/$t
    artifacts=fuzz/artifacts/$t
    log=fuzz/logs/$t.log
    mkdir -p "$corpus" "$artifacts"
    marker=$(mktemp)
    flags=(-max_total_time="$secs" -max_len="${MAX_LEN[$t]}" -rss_limit_mb="${RSS_MB[$t]}"
        -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/")
    [[ -n ${DICT[$t]:-} ]] && flags+=(-dict="${DICT[$t]}")
    [[ $jobs -gt 1 ]] && flags+=(-fork="$jobs")
    echo "fuzzing $t for ${secs}s (log: $log)" >&2
    status=0
    # Seeds are read from fuzz/seeds/$t; what the fuzzer finds goes to the first directory.
    "${nice[@]}" cargo +nightly fuzz run "$t" "$corpus" "fuzz/seeds/$t" -- "${flags[@]}" \
        >"$log" 2>&1 || status=$?
    stats=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 || true)
    execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
    [[ -n $execs ]] || execs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$stats")
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$stats")
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$stats")
    corp=$(sed -nE 's/.* corp: ([0-9]+(\/[0-9A-Za-z]+)?).*/\1/p' <<<"$stats")
    found=$(find "$artifacts" -type f -newer "$marker" \
        \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' -o -name 'leak-*' \) | sort)
    rm -f "$marker"
    if [[ $status -ne 0 && -z $found ]]; then
        found="exit status $status, no artifact (see $log)"
    fi
    if [[ -n $found ]]; then
        failed=1
        crashes=$(tr '\n' ' ' <<<"$found")
    else
        crashes=0
    fi
    summary+=("$(printf '%-11s %6ss  execs %-10s cov %-6s ft %-7s corpus %-9s crashes %s' \
        "$t" "$secs" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$crashes")")
done

echo
printf '%s\n' "${summary[@]}"
exit "$failed"
