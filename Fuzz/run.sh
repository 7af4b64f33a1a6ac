#!/usr/bin/env bash
# Builds the libFuzzer targets (sanitizers fuzzer + address, debug) and runs each for a bounded time
# on a copy of its seed corpus; a crash leaves crash-* / leak-* files under Fuzz/.work/TARGET/.
#   bash Fuzz/run.sh [seconds-per-target] [target...]      (default 120 s, all five targets)
# Linux only. Exit status: 0 when no target crashed. Summary: Fuzz/.work/summary.txt.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FUZZ="$ROOT/Fuzz"
SECONDS_PER="${1:-120}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(FuzzThumborURL FuzzImgproxyURL FuzzSignature FuzzProcessingSpec FuzzImageDecoder)
declare -A CORPUS=([FuzzThumborURL]=thumbor [FuzzImgproxyURL]=imgproxy [FuzzSignature]=signature [FuzzProcessingSpec]=spec
    [FuzzImageDecoder]=decoder)

cd "$FUZZ"
[ -f Package.resolved ] || cp "$ROOT/Package.resolved" . 2>/dev/null || true
swift build -c debug -Xswiftc -sanitize=fuzzer,address || exit 2
BIN="$(swift build -c debug -Xswiftc -sanitize=fuzzer,address --show-bin-path)"

mkdir -p "$FUZZ/.work"
SUMMARY="$FUZZ/.work/summary.txt"
: > "$SUMMARY"
failed=0
for target in "${TARGETS[@]}"; do
    work="$FUZZ/.work/$target"
    mkdir -p "$work/corpus"
    cp -n "$FUZZ/Corpus/${CORPUS[$target]}/"* "$work/corpus/" 2>/dev/null || true
    echo "run.sh: $target for $SECONDS_PER s"
    (cd "$work" && "$BIN/$target" -max_total_time="$SECONDS_PER" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
        -print_final_stats=1 corpus > "$work/log.txt" 2>&1)
    status=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log.txt" | grep -o '[0-9]*$')
    crashes=$(ls "$work" | grep -cE '^(crash|leak|timeout|oom)-' || true)
    line="$target: ${SECONDS_PER}s, ${runs:-?} executions, corpus $(ls "$work/corpus" | wc -l) inputs, exit $status, $crashes crash/leak/timeout/oom files"
    echo "$line" | tee -a "$SUMMARY"
    if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
        failed=1
        grep -m5 -E 'ERROR|Fatal error|panic|SUMMARY' "$work/log.txt" | sed 's/^/    /' | tee -a "$SUMMARY"
    fi
done
exit $failed
