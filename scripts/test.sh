#!/usr/bin/env bash
# Runs the whole test suite. Extra arguments go to `swift test` (e.g. --sanitize=thread).
# Test images are read from Tests/Fixtures/images (override with OSPREY_TESTDATA=<directory>).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
swift build --build-tests "$@"
swift test --skip-build "$@"
