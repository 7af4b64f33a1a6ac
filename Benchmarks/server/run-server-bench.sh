#!/usr/bin/env bash
# Scenario 9: `osprey serve` vs thumbor 7.8 under wrk (misses and hits, nginx static ceiling,
# libvips limit). Called by `bash Benchmarks/run.sh 9`, which builds the binaries and makes the
# 4000×3000 photos; can also run alone when the environment below names them.
#
# Installs what it needs when missing: wrk and nginx (apt), thumbor==7.8.0 in a virtualenv under
# Benchmarks/.work/thumbor-venv (PyPI). Writes Benchmarks/results/<UTC date>-scenario-9.txt/.json
# (a later run the same day replaces them; git keeps the earlier ones).
#
# Environment: OSPREY_BIN (release osprey), OSPREYBENCH_BIN (release OspreyBench, for the libvips
# limit), OSPREY_TESTDATA (test images), OSPREY_LARGE_IMAGES (the photos), S9_REPS (3),
# S9_DURATION (10 s per run), S9_DURATION_LARGE (15 s per miss run on the photos), S9_WARMUP (3 s),
# S9_CONNECTIONS (8), S9_WRK_THREADS (2), S9_CASES (miss,hit), S9_ARGS (more `ab.py server` flags).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="${OSPREY_BENCH_WORK:-$ROOT/Benchmarks/.work}"
: "${OSPREY_BIN:?set OSPREY_BIN to a release osprey (Benchmarks/run.sh 9 does)}"
: "${OSPREYBENCH_BIN:?set OSPREYBENCH_BIN to the release OspreyBench (Benchmarks/run.sh 9 does)}"
TESTDATA="${OSPREY_TESTDATA:-$ROOT/Tests/Fixtures/images}"
: "${OSPREY_LARGE_IMAGES:?set OSPREY_LARGE_IMAGES to the 4000x3000 photos (Benchmarks/run.sh makes them)}"

apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"; }
}
command -v wrk >/dev/null || apt_install wrk
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then apt_install nginx-light || apt_install nginx; fi

VENV="$WORK/thumbor-venv"
REQ="$ROOT/Benchmarks/server/thumbor-requirements.txt"
if [ ! -f "$VENV/.done" ] || ! cmp -s "$REQ" "$VENV/.done"; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q -r "$REQ"
    cp "$REQ" "$VENV/.done"
fi

OUT="$ROOT/Benchmarks/results/$(date -u +%F)-scenario-9"
echo "run-server-bench.sh: osprey $OSPREY_BIN, results in $OUT.txt" >&2
# shellcheck disable=SC2086
python3 "$ROOT/Benchmarks/ab.py" server \
    --osprey "$OSPREY_BIN" --thumbor "$VENV/bin/thumbor" --ospreybench "$OSPREYBENCH_BIN" \
    --small "$TESTDATA" --large "$OSPREY_LARGE_IMAGES" \
    --rounds "${S9_REPS:-3}" --duration "${S9_DURATION:-10}" --duration-large "${S9_DURATION_LARGE:-15}" \
    --warmup "${S9_WARMUP:-3}" --connections "${S9_CONNECTIONS:-8}" --wrk-threads "${S9_WRK_THREADS:-2}" \
    --cases "${S9_CASES:-miss,hit}" --scratch "${TMPDIR:-/var/tmp}" \
    --out-txt "$OUT.txt" --out-json "$OUT.json" ${S9_ARGS:-}
