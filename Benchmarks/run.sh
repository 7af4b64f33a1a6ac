#!/usr/bin/env bash
# Osprey's benchmark suite, in release mode: `bash Benchmarks/run.sh [scenario numbers...]`
# (from the repository root or anywhere; all scenarios by default).
#
# Prepares, under Benchmarks/.work (git-ignored): 4000×3000 JPEG photos made with the `vips` CLI
# (apt: libvips-tools) from the test images. Then builds and runs the harness (scenarios 1-6),
# which prints a table per scenario and writes Benchmarks/results/YYYY-MM-DD-scenario-N.json
# (several scenarios: YYYY-MM-DD-scenarios-1-2-3.json, all of them: YYYY-MM-DD-scenarios-all.json)
# and the printed tables beside it as .txt. A later run the same day replaces that day's file; git
# keeps the earlier ones.
#
# Scenarios 8 and 9 run whole processes through the one comparison driver, Benchmarks/ab.py: 8 is
# `ab.py cli` (the release `osprey prefetch` against the Python + Pillow peer, in a virtualenv made
# here, and the in-process limits, from an nginx origin), 9 is `ab.py server` (`osprey serve`
# against thumbor 7.8 under wrk, nginx static, the libvips limit): every peer comparison goes
# through ab.py, none through the harness. They install nginx-light and wrk with apt and thumbor
# 7.8 (PyPI, a virtualenv) when missing, and write Benchmarks/results/YYYY-MM-DD-scenario-8.txt/.json
# and -scenario-9. (Scenario 7, the same peer run from inside the harness, was folded into 8.)
#
# Environment: OSPREY_TESTDATA (default Tests/Fixtures/images of the repository),
# BENCH_REPS (5), E2E_REPS (3), SMALL_REPEATS (5), LARGE_REPEATS (2), E2E_CONCURRENCY (4); scenario 8:
# S8_REPS (3), S8_ARGS (more `ab.py cli` flags); scenario 9: OSPREY_BIN (default: the release osprey
# built here), S9_REPS (3), S9_DURATION (10), S9_DURATION_LARGE (15), S9_CONNECTIONS (8), S9_ARGS
# (more `ab.py server` flags); see Benchmarks/README.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
WORK="${OSPREY_BENCH_WORK:-$ROOT/Benchmarks/.work}"
TESTDATA="${OSPREY_TESTDATA:-$ROOT/Tests/Fixtures/images}"
TESTDATA="$(cd "$TESTDATA" && pwd)"
mkdir -p "$WORK" "$ROOT/Benchmarks/results"

# Large photos: 4000×3000 JPEGs (q90) resized up from the test images.
LARGE="$WORK/large"
if [ ! -f "$LARGE/.done" ]; then
    command -v vips >/dev/null || { echo "run.sh: needs the vips CLI (apt-get install libvips-tools)" >&2; exit 1; }
    rm -rf "$LARGE"; mkdir -p "$LARGE"
    for name in astronaut.png chelsea.png coffee.png hubble_deep_field.jpg motorcycle_left.png rocket.jpg; do
        [ -f "$TESTDATA/$name" ] || continue
        echo "run.sh: making 4000x3000 photo from $name"
        vips thumbnail "$TESTDATA/$name" "$LARGE/large_${name%.*}.jpg[Q=90]" 4000 --height 3000 --size force
    done
    touch "$LARGE/.done"
fi

# Scenarios 8 and 9 run after the harness (through ab.py); the harness gets the other numbers and
# does not run at all when only 8 or 9 was asked for.
wants8=1 wants9=1 harness=1
harness_args=()
if [ $# -gt 0 ]; then
    wants8=0 wants9=0
    for a in "$@"; do
        case "$a" in
            7) echo "run.sh: scenario 7 (the Pillow peer) is part of scenario 8 now: running 8" >&2; wants8=1 ;;
            8) wants8=1 ;;
            9) wants9=1 ;;
            *) harness_args+=("$a") ;;
        esac
    done
    [ ${#harness_args[@]} -gt 0 ] || harness=0
fi
apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"; }
}
if [ "$wants8" = 1 ] || [ "$wants9" = 1 ]; then
    command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || apt_install nginx-light || apt_install nginx
fi
if [ "$wants8" = 1 ]; then
    # The Python + Pillow peer's virtualenv (scenario 8).
    VENV="$WORK/venv"
    if [ ! -f "$VENV/.done" ]; then
        python3 -m venv "$VENV"
        "$VENV/bin/pip" install -q -r "$ROOT/Benchmarks/peer/requirements.txt"
        touch "$VENV/.done"
    fi
fi
if [ "$wants9" = 1 ]; then
    command -v wrk >/dev/null || apt_install wrk
    THUMBOR_VENV="$WORK/thumbor-venv"
    REQ="$ROOT/Benchmarks/server/thumbor-requirements.txt"
    if [ ! -f "$THUMBOR_VENV/.done" ] || ! cmp -s "$REQ" "$THUMBOR_VENV/.done"; then
        rm -rf "$THUMBOR_VENV"
        python3 -m venv "$THUMBOR_VENV"
        "$THUMBOR_VENV/bin/pip" install -q -r "$REQ"
        cp "$REQ" "$THUMBOR_VENV/.done"
    fi
fi

swift build -c release --package-path "$ROOT/Benchmarks" --product OspreyBench
BINDIR="$(swift build -c release --package-path "$ROOT/Benchmarks" --show-bin-path)"
BIN="$BINDIR/OspreyBench"
# The CLI a user runs, built in release mode from the main package (a product of this package's
# dependency, so it shares this build directory's release builds of swift-nio & co.).
if [ "$wants8" = 1 ] || { [ "$wants9" = 1 ] && [ -z "${OSPREY_BIN:-}" ]; }; then
    swift build -c release --package-path "$ROOT/Benchmarks" --product osprey
fi

# Scratch files (caches, scenario 4's 10,000-entry trims) go to a fresh ext4 file system per run
# (`ab.py scratch`: on an ext4 without a journal, as these machines' root file system is, files
# created in the minutes after a mass deletion cost 10-20x the CPU), removed afterwards.
if [ -n "${OSPREY_BENCH_TMP:-}" ]; then
    SCRATCH="$OSPREY_BENCH_TMP"   # the harness removes only its own subdirectory of it
else
    SCRATCH="$(python3 "$ROOT/Benchmarks/ab.py" scratch up "${TMPDIR:-/var/tmp}")"
fi
cleanup() { [ -n "${OSPREY_BENCH_TMP:-}" ] || python3 "$ROOT/Benchmarks/ab.py" scratch down "$SCRATCH"; }
trap cleanup EXIT

# Results: Benchmarks/results/<UTC date>-scenario-N or -scenarios-A-B-... (all: -scenarios-all).
if [ ${#harness_args[@]} -eq 0 ]; then
    RESULT_NAME="scenarios-all"
elif [ ${#harness_args[@]} -eq 1 ]; then
    RESULT_NAME="scenario-${harness_args[0]}"
else
    RESULT_NAME="scenarios-$(IFS=-; echo "${harness_args[*]}")"
fi
RESULT="$ROOT/Benchmarks/results/$(date -u +%F)-$RESULT_NAME"

if [ "$harness" = 1 ]; then
VIPS_CONCURRENCY=1 \
OSPREY_TESTDATA="$TESTDATA" \
OSPREY_LARGE_IMAGES="$LARGE" \
BENCH_JSON="${BENCH_JSON:-$RESULT.json}" \
OSPREY_BENCH_TMP="$SCRATCH" \
    "$BIN" ${harness_args[@]+"${harness_args[@]}"} | tee "$RESULT.txt"
fi

DAY="$ROOT/Benchmarks/results/$(date -u +%F)"
if [ "$wants8" = 1 ]; then
    # shellcheck disable=SC2086
    OSPREY_TESTDATA="$TESTDATA" python3 "$ROOT/Benchmarks/ab.py" cli osprey="$BINDIR/osprey" --peer "$VENV/bin/python" \
        --limits "$BIN" --floor --set small,large --rounds "${S8_REPS:-3}" --scratch "${TMPDIR:-/var/tmp}" \
        --out-txt "$DAY-scenario-8.txt" --out-json "$DAY-scenario-8.json" ${S8_ARGS:-}
fi
if [ "$wants9" = 1 ]; then
    # shellcheck disable=SC2086
    python3 "$ROOT/Benchmarks/ab.py" server --osprey "${OSPREY_BIN:-$BINDIR/osprey}" --thumbor "$THUMBOR_VENV/bin/thumbor" \
        --ospreybench "$BIN" --small "$TESTDATA" --large "$LARGE" --rounds "${S9_REPS:-3}" --duration "${S9_DURATION:-10}" \
        --duration-large "${S9_DURATION_LARGE:-15}" --connections "${S9_CONNECTIONS:-8}" --scratch "${TMPDIR:-/var/tmp}" \
        --out-txt "$DAY-scenario-9.txt" --out-json "$DAY-scenario-9.json" ${S9_ARGS:-}
fi
