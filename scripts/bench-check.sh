#!/usr/bin/env bash
# The counted benchmarks' regression check (run by .ci/run): every scenario of OspreyCounts
# (Benchmarks/Counts: memory hits, misses through a loopback origin, decode + process, the disk
# store, placeholder hashes, progressive previews, the server's hits and misses) runs once under
# valgrind's callgrind, which counts instructions and allocator calls in software, so the counts do
# not depend on the machine's load. They are compared per step with Benchmarks/counts-baseline.tsv:
# more than 3% more instructions or allocations in any scenario fails (so does more than 3% fewer:
# a change that speeds something up updates the baseline in the same commit). Retains and releases
# are printed beside them; the pipeline's own miss (miss-start), whose allocations and retains are
# exact, fails at 0.5% more of them. The rules: scripts/bench-check.py.
#
#   bash scripts/bench-check.sh [SCENARIO...]            check (all scenarios by default)
#   bash scripts/bench-check.sh --runs 2 [SCENARIO...]   run twice: both runs against the baseline, and their spread
#   bash scripts/bench-check.sh --update [SCENARIO...]   write the counts as the baseline (commit it)
#
# The counted binary is the debug build the tests already made (`swift build` builds it with
# them), so in CI the check adds no build, only the valgrind runs (about 2.5 minutes on 2 cores).
# Debug counts weigh Osprey's own Swift code more than a release build would; the libraries
# (libvips, libjpeg, glibc) are the system's release builds either way. VIPS_CONCURRENCY=1 and
# VIPS_NOVECTOR=1 keep libvips on one worker and off liborc's run-time generated code;
# SWIFT_DETERMINISTIC_HASHING=1 gives every run the same Set and Dictionary order. Knobs:
# BENCH_THRESHOLD (0.03), BENCH_TIMEOUT (seconds per scenario, 900), BENCH_WORK (work files,
# default .build/counts). valgrind's --fair-sched=yes hands its one lock to threads in order.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

mode=compare
runs=1
scenarios=()
while [ $# -gt 0 ]; do
    case "$1" in
        --update) mode=update ;;
        --runs) runs=$2; shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
        *) scenarios+=("$1") ;;
    esac
    shift
done

if ! command -v valgrind >/dev/null 2>&1; then
    echo "==> installing valgrind with apt" >&2
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq valgrind >/dev/null
fi

# The build the tests use (in CI: already made by scripts/test.sh, so nothing is rebuilt).
nice -n 10 swift build --build-tests
work="${BENCH_WORK:-$PWD/.build/counts}"
mkdir -p "$work"
# valgrind 3.19 cannot read the DWARF 5 this toolchain writes: a copy without debug information
# (its symbol table names the functions, which is all callgrind needs here).
bin="$work/OspreyCounts"
strip --strip-debug -o "$bin" "$(swift build --show-bin-path)/OspreyCounts"
# SWIFT_DETERMINISTIC_HASHING: the same Set and Dictionary order in every run (sorting work follows it).
export COUNTS_WORK="$work" VIPS_CONCURRENCY=1 VIPS_NOVECTOR=1 SWIFT_DETERMINISTIC_HASHING=1
# The generated inputs (a 4000x3000 photo, a progressive JPEG), made natively once.
nice -n 10 "$bin" prepare
[ "${#scenarios[@]}" -gt 0 ] || mapfile -t scenarios < <("$bin" list | cut -d' ' -f1)

started=$SECONDS
run_dirs=()
for run in $(seq 1 "$runs"); do
    dir="$work/run-$run"
    rm -rf "$dir"
    mkdir -p "$dir"
    run_dirs+=("$dir")
    for scenario in "${scenarios[@]}"; do
        steps=$("$bin" list | awk -v name="$scenario" '$1 == name { print $2 }')
        [ -n "$steps" ] || { echo "bench-check: no scenario $scenario" >&2; exit 2; }
        scenario_started=$SECONDS
        if ! timeout "${BENCH_TIMEOUT:-900}" nice -n 10 valgrind --tool=callgrind --fair-sched=yes \
            --callgrind-out-file="$dir/$scenario.out.%p" \
            --zero-before='*countedRegionBegins*' --dump-before='*countedRegionEnds*' \
            "$bin" "$scenario" >"$dir/$scenario.log" 2>"$dir/$scenario.valgrind"; then
            echo "bench-check: $scenario failed under valgrind (see $dir/$scenario.log and .valgrind)" >&2
            tail -5 "$dir/$scenario.log" "$dir/$scenario.valgrind" >&2
            exit 1
        fi
        echo "$steps" >"$dir/$scenario.iterations"
        echo "==> run $run: $scenario ($steps steps) counted in $((SECONDS - scenario_started)) s" >&2
    done
done
echo "==> valgrind runs took $((SECONDS - started)) s" >&2

if [ "$mode" = update ]; then
    python3 scripts/bench-check.py update Benchmarks/counts-baseline.tsv "${run_dirs[0]}"
else
    python3 scripts/bench-check.py compare Benchmarks/counts-baseline.tsv "${run_dirs[@]}"
fi
