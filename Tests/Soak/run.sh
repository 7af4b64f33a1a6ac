#!/usr/bin/env bash
# The soak and fault run of `osprey serve` (issue 17): the result memory cache filled, mixed load
# while the origin misbehaves, saturation, idle check, kill -9 + damaged cache, restart and rescan.
# Not run in CI.
#   bash Tests/Soak/run.sh            # ~6 min fill + 10 min load, the release CLI at .build/release/osprey
#   SOAK_SECONDS=60 OSPREY_BIN=/path/osprey bash Tests/Soak/run.sh
# Results: Benchmarks/results/<UTC date>-soak.{txt,json,png} (SOAK_OUT to choose). Other knobs: soak.py.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
WORK="$ROOT/Benchmarks/.work/soak"
export OSPREY_BIN="${OSPREY_BIN:-$ROOT/.build/release/osprey}"
if [ ! -x "$OSPREY_BIN" ]; then
    echo "run.sh: building the release CLI"
    (cd "$ROOT" && swift build -c release --product osprey)
fi
command -v vips >/dev/null || { echo "run.sh: needs vips (apt-get install libvips-tools)"; exit 1; }
VENV="$WORK/venv"
if [ ! -f "$VENV/.done" ]; then
    mkdir -p "$WORK"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q -r "$ROOT/Tests/Soak/requirements.txt"
    touch "$VENV/.done"
fi
exec "$VENV/bin/python" "$ROOT/Tests/Soak/soak.py"
