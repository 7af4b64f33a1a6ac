#!/usr/bin/env bash
# Runs race.c's two builds in turn, RUNS times each, and counts the runs that died:
#   bash Benchmarks/orc/stress.sh [RUNS] [THREADS] [SECONDS] [IMAGE]
# "plain": libvips' calls go to liborc as it is (Debian 12: 0.4.33, which races); "serialised":
# the same program linked with Osprey's osprey_orc.c (orc_program_compile and orc_program_free
# serialised on one mutex). Both run with libvips' vector (orc) paths on. Needs libvips-dev and cc.
set -u
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-20}; threads=${2:-4}; seconds=${3:-20}
image=${4:-$here/../../Tests/Fixtures/images/hopper.jpg}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/plain" "$here/race.c" $(pkg-config --cflags --libs vips) -lpthread || exit 1
cc -O2 -o "$work/serialised" "$here/race.c" "$here/../../Sources/COspreyVips/osprey_orc.c" \
    -I"$here/../../Sources/COspreyVips/include" $(pkg-config --cflags --libs vips) -ldl -lpthread || exit 1
echo "# $(date -u +%FT%TZ): liborc $(dpkg-query -W -f='${Version}' liborc-0.4-0 2>/dev/null), libvips $(pkg-config --modversion vips), $runs runs each, $threads threads, $seconds s a run"
declare -A died=([plain]=0 [serialised]=0)
for ((i = 1; i <= runs; i++)); do
    for build in plain serialised; do
        "$work/$build" "$image" "$threads" "$seconds" > "$work/out" 2> "$work/err"
        status=$?
        if [ $status -ne 0 ]; then
            died[$build]=$((died[$build] + 1))
            echo "run $i $build: exit $status $(tail -c 200 "$work/err" | tr '\n' ' ')"
        else
            echo "run $i $build: ok ($(head -1 "$work/out"); $(grep -o '[0-9]* images' "$work/out" | awk '{s+=$1} END {print s}') images)"
        fi
    done
done
echo "plain: ${died[plain]} of $runs runs died; serialised: ${died[serialised]} of $runs runs died"
