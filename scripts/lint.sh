#!/usr/bin/env bash
# Checks the formatting of every Swift file against .swift-format (swift-format ships with the
# toolchain): `bash scripts/lint.sh`; `bash scripts/lint.sh --fix` formats them in place.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
paths=(Sources Tests Benchmarks/Sources Fuzz/Sources Package.swift Benchmarks/Package.swift Fuzz/Package.swift)
if [ "${1:-}" = "--fix" ]; then
    swift format --in-place --recursive --parallel "${paths[@]}"
else
    swift format lint --strict --recursive --parallel "${paths[@]}"
fi
