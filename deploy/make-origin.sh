#!/usr/bin/env bash
# Makes the origin's images for the cluster test: COUNT (default 100) distinct images, resized
# copies of the still test images (libvips CLI, `apt-get install libvips-tools`), under
# ORIGIN_DIR/img/NNN.(jpg|png). Generated, never committed.
#   deploy/make-origin.sh [ORIGIN_DIR] [SOURCE_IMAGES_DIR]
set -euo pipefail
OUT=${1:-${ORIGIN_DIR:-/tmp/osprey-cluster/origin}}
SRC=${2:-${SOURCE_IMAGES:-${OSPREY_TESTDATA:-$(cd "$(dirname "$0")/.." && pwd)/Tests/Fixtures/images}}}
COUNT=${COUNT:-100}
command -v vips >/dev/null || { echo "make-origin: needs the vips CLI (apt-get install -y libvips-tools)" >&2; exit 1; }
mkdir -p "$OUT/img"
mapfile -t inputs < <(find "$SRC" -maxdepth 1 -type f \( -name '*.jpg' -o -name '*.png' \) | sort)
((${#inputs[@]})) || { echo "make-origin: no .jpg/.png images in $SRC" >&2; exit 1; }
for ((n = 1; n <= COUNT; n++)); do
    in=${inputs[$(((n - 1) % ${#inputs[@]}))]}
    ext=${in##*.}
    out=$(printf '%s/img/%03d.%s' "$OUT" "$n" "$ext")
    [[ -s $out ]] && continue
    # distinct width per image (600..996 px), so every source is a different image
    vips thumbnail "$in" "$out" $((600 + 4 * n)) --height 2000 >/dev/null 2>&1 \
        || vips thumbnail "$in" "$out" $((600 + 4 * n)) --height 2000
done
echo "origin: $(ls "$OUT/img" | wc -l) images in $OUT/img"
