#!/usr/bin/env bash
# Gallery scrolling (issue 41): scripted fast scrolling through a GtkGridView of 1,000 images from
# a loopback origin, frame times from the frame clock, Osprey against solid-colour cells (the
# floor), cell-sized textures decoded before the clock (drawing alone) and the naive way
# (gdk_texture_new_from_bytes on the main thread in bind). Usage, from anywhere:
#   bash Benchmarks/gallery_scroll.sh
# Prints one JSON line per run, then a table (p50/p99/max frame time, peak RSS, the main thread's
# CPU and its time waiting for a core) and the p99 ratios, with the load average around each run.
#
# Makes, under Benchmarks/.work/gallery (git-ignored, kept between runs): 20 640x480 JPEGs and 60
# 4000x3000 JPEGs (~380 KB) of noise (`vips perlin`, apt: libvips-tools); every 10th item is a
# 4000x3000 one, each item under its own URL (`?item=N`). Builds GalleryScrollBench in release from
# this package (first build 20-40 min on 2 cores), starts the origin (`python3 -m http.server` on
# 127.0.0.1, at nice 10: it stands in for a remote server, whose CPU is not the client's) and runs
# every mode under Xvfb (xvfb-run, 1280x1024x24; GDK_BACKEND=x11 GSK_RENDERER=cairo).
#
# Environment: GALLERY_REPS (rounds of solid, osprey, decoded interleaved; default 2),
# GALLERY_NAIVE (1: run naive once after them, ~5 min; 0: skip), GALLERY_SPEED (pixels per frame,
# 60), GALLERY_ORIGIN_NICE (10), GALLERY_PLAIN (1: also osprey without spinner and fade, once; all: also
# with the fade only and with the spinner only),
# GALLERY_ITEMS (items in the grid, default 1000; 10000 to check that loading and memory follow
# the screen, not the item count: each result line has the origin's requests before the first
# scroll, `downloads_before_scroll`),
# GALLERY_BASELINE (an earlier build of GalleryScrollBench: its osprey mode runs in every round too,
# labelled osprey-base, for an A/B in the same conditions).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/origin.sh
source scripts/setup.sh  # Swift on PATH; libvips, GTK 4 and Xvfb through apt when missing
if ! command -v vips >/dev/null 2>&1; then
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq libvips-tools >/dev/null
fi
REPS="${GALLERY_REPS:-2}"
NAIVE="${GALLERY_NAIVE:-1}"
SPEED="${GALLERY_SPEED:-60}"
ORIGIN_NICE="${GALLERY_ORIGIN_NICE:-10}"
PLAIN="${GALLERY_PLAIN:-0}"
BASELINE="${GALLERY_BASELINE:-}"
ITEMS="${GALLERY_ITEMS:-1000}"
WORK="$ROOT/Benchmarks/.work/gallery"
IMAGES="$WORK/images"

# The origin's images: noise (`vips perlin`) in a grey tint, a different seed and cell size per file.
make_image() {  # NAME WIDTH HEIGHT CELL SEED TINT
    vips perlin "$WORK/p.v" "$2" "$3" --cell-size "$4" --seed "$5"
    vips linear "$WORK/p.v" "$WORK/b.v" 120 "$6" --uchar
    vips bandjoin "$WORK/b.v $WORK/b.v $WORK/b.v" "$IMAGES/$1[Q=85]"
}
if [ ! -f "$IMAGES/.done" ]; then
    rm -rf "$IMAGES"
    mkdir -p "$IMAGES"
    echo "gallery_scroll: making 20 640x480 and 60 4000x3000 JPEGs in $IMAGES (minutes)" >&2
    for i in $(seq 0 19); do make_image "s$i.jpg" 640 480 $((40 + i * 5)) "$i" $((i * 9 + 20)); done
    for i in $(seq 0 59); do make_image "L$i.jpg" 4000 3000 $((200 + i * 7)) $((100 + i)) $((i * 3 + 20)); done
    rm -f "$WORK/p.v" "$WORK/b.v"
    touch "$IMAGES/.done"
fi

echo "gallery_scroll: building GalleryScrollBench (release)" >&2
swift build -c release --package-path "$ROOT/Benchmarks" --product GalleryScrollBench >&2
BENCH="$(swift build -c release --package-path "$ROOT/Benchmarks" --show-bin-path)/GalleryScrollBench"

run_dir="$(mktemp -d)"
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$run_dir"; }
trap cleanup EXIT
start_origin "$IMAGES" "$run_dir/server.log" "$ORIGIN_NICE"
for i in $(seq 0 $((ITEMS - 1))); do
    if [ $((i % 10)) -eq 0 ]; then name="L$(((i / 10) % 60)).jpg"; else name="s$((i % 20)).jpg"; fi
    printf 'http://127.0.0.1:%s/%s?item=%d\n' "$port" "$name" "$i"
done >"$run_dir/urls.txt"

export GDK_BACKEND=x11 GSK_RENDERER=cairo GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1
export GALLERY_ORIGIN_LOG="$run_dir/server.log"  # the bench counts its requests at the first scroll
results="$run_dir/results.jsonl"
run() {  # MODE [LABEL [BINARY]]
    local before after line
    before="$(cut -d' ' -f1 /proc/loadavg)"
    line="$(xvfb-run -a -s "-screen 0 1280x1024x24 -nolisten tcp" "${3:-$BENCH}" "$1" "$run_dir/urls.txt" "$SPEED" 2>>"$run_dir/bench.log" | grep '^{' | tail -1 || true)"
    after="$(cut -d' ' -f1 /proc/loadavg)"
    [ -n "$line" ] || { echo "error: $1 printed no result (see below)" >&2; tail -20 "$run_dir/bench.log" >&2; exit 1; }
    line="${line%\}}, \"label\": \"${2:-$1}\", \"load_before\": $before, \"load_after\": $after}"
    echo "$line" | tee -a "$results"
}
for _ in $(seq 1 "$REPS"); do
    for mode in solid osprey decoded; do run "$mode"; done
    if [ -n "$BASELINE" ]; then run osprey osprey-base "$BASELINE"; fi
done
case "$PLAIN" in
    1) GALLERY_BENCH_PLAIN=1 run osprey osprey-plain ;;
    all) for v in 1 fade spinner; do GALLERY_BENCH_PLAIN=$v run osprey "osprey-$([ $v = 1 ] && echo plain || echo $v)"; done ;;
esac
if [ "$NAIVE" = 1 ]; then run naive; fi

python3 - "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"\n  {'mode':<13} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'RSS MB':>7} {'main cpu s':>10} {'main waiting s':>14} {'total s':>8} {'load':>10} {'GETs before scroll':>18}")
for r in rows:
    print(f"  {r['label']:<13} {r['p50_ms']:7.1f} {r['p99_ms']:7.1f} {r['max_ms']:7.1f} {r['peak_rss_mb']:7.1f} "
          f"{r['main_cpu_ms'] / 1000:10.2f} {r['main_waiting_ms'] / 1000:14.2f} {r['total_ms'] / 1000:8.1f} "
          f"{r['load_before']:4.1f}-{r['load_after']:<4.1f} {r.get('downloads_before_scroll', -1):18d}")
def p99(label): return [r["p99_ms"] for r in rows if r["label"] == label]
solid, osprey, decoded, naive, base = p99("solid"), p99("osprey"), p99("decoded"), p99("naive"), p99("osprey-base")
pairs = list(zip(osprey, solid))
if pairs:
    ratios = [o / s for o, s in pairs]
    print(f"\nosprey / solid p99, per round: {' '.join(f'{x:.2f}x' for x in ratios)} (median {statistics.median(ratios):.2f}x; goal <= 1.25x)")
if base and solid:
    print(f"osprey-base / solid p99, per round: {' '.join(f'{b / s:.2f}x' for b, s in zip(base, solid))}")
if decoded and solid:
    print(f"decoded / solid p99, per round: {' '.join(f'{d / s:.2f}x' for d, s in zip(decoded, solid))}")
if naive and osprey:
    print(f"osprey / naive p99: {' '.join(f'{o / naive[0]:.2f}x' for o in osprey)}")
loads = [r[k] for r in rows for k in ("load_before", "load_after")]
print(f"load average (1 min) around the runs: {min(loads):.1f}-{max(loads):.1f}")
EOF
