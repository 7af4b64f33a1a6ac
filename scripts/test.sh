#!/usr/bin/env bash
# Runs the whole test suite. Extra arguments go to `swift test` (e.g. --sanitize=thread).
# Test images are read from Tests/Fixtures/images (override with OSPREY_TESTDATA=<directory>).
# With --sanitize=thread: scripts/tsan-suppressions.txt is used, and the tests run one at a time
# (--no-parallel; about 8 minutes on 2 cores): all at once under TSan, some wait past their time limits.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
swift build --build-tests "$@"
if [[ " $* " == *" --sanitize=thread "* ]]; then
    export TSAN_OPTIONS="suppressions=$PWD/scripts/tsan-suppressions.txt ${TSAN_OPTIONS:-}"
    swift test --skip-build --no-parallel "$@"
else
    swift test --skip-build "$@"
fi
