#!/usr/bin/env bash
# Animated playback on a GTK target (issue 42): `bash Benchmarks/playback.sh` from anywhere.
#
# Builds AnimationPlaybackBench in release mode, makes Benchmarks/.work/iss634.webp from the test
# image iss634.gif with the vips CLI (apt: libvips-tools; lossless, every page and delay kept), starts
# its own Xvfb on a free display, and plays each file for PLAY_SECONDS of frame-clock time in a fresh
# process per run, interleaved PLAY_REPS times: decoded whole with the default bounded buffer
# (`bounded`, PLAY_BUFFER frames), decoded whole with every frame held (`all`), and decoded on demand
# through an AnimationFrameDecoder with the bounded buffer (`ondemand`), through the one comparison
# driver (`Benchmarks/ab.py playback`): the ratios against `all` and each run's figures.
#
# Environment: PLAY_SECONDS (10), PLAY_REPS (3), PLAY_BUFFER (8), OSPREY_TESTDATA (default
# Tests/Fixtures/images of the repository), PLAY_BIN (a prebuilt AnimationPlaybackBench: no build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SECONDS_EACH="${PLAY_SECONDS:-10}"
REPS="${PLAY_REPS:-3}"
BUFFER="${PLAY_BUFFER:-8}"
TESTDATA="${OSPREY_TESTDATA:-$ROOT/Tests/Fixtures/images}"
WORK="$ROOT/Benchmarks/.work"
mkdir -p "$WORK"

if [ -z "${PLAY_BIN:-}" ]; then
    command -v swift >/dev/null || export PATH="/opt/swift/usr/bin:$PATH"
    swift build -c release --package-path Benchmarks --product AnimationPlaybackBench >&2
    PLAY_BIN="$ROOT/Benchmarks/.build/release/AnimationPlaybackBench"
fi

WEBP="$WORK/iss634.webp"
if [ ! -f "$WEBP" ]; then
    command -v vips >/dev/null || { echo "playback.sh: needs the vips CLI (apt-get install libvips-tools)" >&2; exit 1; }
    vips copy "$TESTDATA/iss634.gif[n=-1]" "$WEBP[lossless]"
fi

# Xvfb on a display number no other server holds; stopped on exit.
command -v Xvfb >/dev/null || { echo "playback.sh: needs Xvfb (apt-get install xvfb)" >&2; exit 1; }
number=90
while [ -e "/tmp/.X$number-lock" ] || [ -e "/tmp/.X11-unix/X$number" ]; do number=$((number + 1)); done
Xvfb ":$number" -screen 0 1280x1024x24 -nolisten tcp >/dev/null 2>&1 &
XVFB_PID=$!
trap 'kill "$XVFB_PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do [ -e "/tmp/.X11-unix/X$number" ] && break; sleep 0.1; done
export DISPLAY=":$number" GDK_BACKEND=x11 GSK_RENDERER=cairo GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1

echo "# $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD), load average $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$ROOT/Benchmarks/ab.py" playback "$PLAY_BIN" "$TESTDATA/iss634.gif" "$WEBP" --rounds "$REPS" --seconds "$SECONDS_EACH" --buffer "$BUFFER"
