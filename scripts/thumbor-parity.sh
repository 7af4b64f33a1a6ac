#!/usr/bin/env bash
# Same URLs, same answers as thumbor 7.8 (Tests/ThumborParity/README.md): makes the thumbor virtualenv
# (PyPI, Benchmarks/server/thumbor-requirements.txt) under Benchmarks/.work once, builds `osprey`
# (release; OSPREY_BIN=PATH uses another build) and runs both parity checks, the URL API's and the
# upload API's. Not in CI: thumbor's install and a release build do not fit its time.
#   bash scripts/thumbor-parity.sh [> Benchmarks/results/$(date -u +%F)-thumbor-parity.txt]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
venv=Benchmarks/.work/thumbor-venv
if [ ! -x "$venv/bin/thumbor" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q -r Benchmarks/server/thumbor-requirements.txt
fi
osprey=${OSPREY_BIN:-}
if [ -z "$osprey" ]; then
    swift build -c release --product osprey >&2
    osprey="$(swift build -c release --show-bin-path)/osprey"
fi
"$venv/bin/python" Tests/ThumborParity/thumbor_parity.py --osprey "$osprey" --thumbor "$venv/bin/thumbor"
"$venv/bin/python" Tests/ThumborParity/thumbor_upload_parity.py --osprey "$osprey" --venv "$venv"
