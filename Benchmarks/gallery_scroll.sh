#!/usr/bin/env bash
# Gallery scrolling (issue 41): scripted fast scrolling through a GtkGridView of 1,000 images from
# a loopback origin, frame times from the frame clock, Osprey against solid-colour cells (the
# floor), cell-sized textures decoded before the clock (drawing alone) and the naive way
# (gdk_texture_new_from_bytes on the main thread in bind). Usage, from anywhere:
#   bash Benchmarks/gallery_scroll.sh
# The runs and their ratios go through the one comparison driver (`Benchmarks/ab.py gallery`):
# p50/p99/max frame time, peak RSS, the main thread's CPU and its time waiting for a core, and the
# p99 ratios to the solid cells, per round.
#
# The images are gallery_images.sh's (20 640x480 and 60 4000x3000 noise JPEGs, made once); every
# 10th item is a 4000x3000 one, each item under its own URL (`?item=N`). Builds GalleryScrollBench in release from
# this package (first build 20-40 min on 2 cores), starts the loopback origin the tests and the
# harness use (`OspreyBench origin`, LoopbackOrigin, at nice 10: it stands in for a remote server,
# whose CPU is not the client's) and runs every mode under Xvfb (xvfb-run, 1280x1024x24;
# GDK_BACKEND=x11 GSK_RENDERER=cairo).
#
# Environment: GALLERY_REPS (rounds of solid, osprey, decoded, order rotating; default 2),
# GALLERY_NAIVE (1: naive in every round too, ~5 min a run; default 0), GALLERY_SPEED (pixels per
# frame, 60), GALLERY_ORIGIN_NICE (10), GALLERY_PLAIN (1: also osprey without spinner and fade),
# GALLERY_ITEMS (items in the grid, default 1000; 10000 to check that loading and memory follow
# the screen, not the item count: each run reports the origin's requests before the first scroll),
# GALLERY_BASELINE (an earlier build of GalleryScrollBench: its osprey mode as osprey-base),
# GALLERY_OUT (a file for the report).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/setup.sh  # Swift on PATH; libvips, GTK 4 and Xvfb through apt when missing
REPS="${GALLERY_REPS:-2}"
NAIVE="${GALLERY_NAIVE:-0}"
SPEED="${GALLERY_SPEED:-60}"
ORIGIN_NICE="${GALLERY_ORIGIN_NICE:-10}"
PLAIN="${GALLERY_PLAIN:-0}"
BASELINE="${GALLERY_BASELINE:-}"
ITEMS="${GALLERY_ITEMS:-1000}"
IMAGES="$(bash "$ROOT/Benchmarks/gallery_images.sh")"

echo "gallery_scroll: building GalleryScrollBench and OspreyBench (release)" >&2
for product in GalleryScrollBench OspreyBench; do swift build -c release --package-path "$ROOT/Benchmarks" --product $product >&2; done
BINDIR="$(swift build -c release --package-path "$ROOT/Benchmarks" --show-bin-path)"
BENCH="$BINDIR/GalleryScrollBench"

run_dir="$(mktemp -d)"
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$run_dir"; }
trap cleanup EXIT
coproc ORIGIN { ORIGIN_LOG="$run_dir/server.log" exec nice -n "$ORIGIN_NICE" "$BINDIR/OspreyBench" origin "$IMAGES"; }
server_pid=$ORIGIN_PID
read -r _ port <&"${ORIGIN[0]}" || { echo "error: the loopback origin did not start" >&2; exit 1; }
for i in $(seq 0 $((ITEMS - 1))); do
    if [ $((i % 10)) -eq 0 ]; then name="L$(((i / 10) % 60)).jpg"; else name="s$((i % 20)).jpg"; fi
    printf 'http://127.0.0.1:%s/%s?item=%d\n' "$port" "$name" "$i"
done >"$run_dir/urls.txt"

export GALLERY_ORIGIN_LOG="$run_dir/server.log"  # the bench counts its requests at the first scroll
flags=(--rounds "$REPS" --speed "$SPEED")
[ "$NAIVE" = 1 ] && flags+=(--naive)
[ "$PLAIN" = 1 ] && flags+=(--plain)
[ -n "$BASELINE" ] && flags+=(--baseline "$BASELINE")
python3 "$ROOT/Benchmarks/ab.py" gallery "$BENCH" "$run_dir/urls.txt" "${flags[@]}" ${GALLERY_OUT:+--out-txt "$GALLERY_OUT"}
