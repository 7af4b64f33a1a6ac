#!/usr/bin/env bash
# The gallery benchmarks' origin images (gallery_scroll.sh, gallery_offline.sh), made once under
# Benchmarks/.work/gallery/images (git-ignored): 20 640x480 and 60 4000x3000 JPEGs (~380 KB) of
# noise (`vips perlin`) in a grey tint, a different seed and cell size per file. Installs the vips
# CLI (apt: libvips-tools) when missing. Usage: bash Benchmarks/gallery_images.sh (prints the folder).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$ROOT/Benchmarks/.work/gallery"
IMAGES="$WORK/images"
if [ ! -f "$IMAGES/.done" ]; then
    if ! command -v vips >/dev/null 2>&1; then
        sudo_cmd=""
        [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
        $sudo_cmd apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq libvips-tools >/dev/null
    fi
    make_image() {  # NAME WIDTH HEIGHT CELL SEED TINT
        vips perlin "$WORK/p.v" "$2" "$3" --cell-size "$4" --seed "$5"
        vips linear "$WORK/p.v" "$WORK/b.v" 120 "$6" --uchar
        vips bandjoin "$WORK/b.v $WORK/b.v $WORK/b.v" "$IMAGES/$1[Q=85]"
    }
    rm -rf "$IMAGES"
    mkdir -p "$IMAGES"
    echo "gallery_images: making 20 640x480 and 60 4000x3000 JPEGs in $IMAGES (minutes)" >&2
    for i in $(seq 0 19); do make_image "s$i.jpg" 640 480 $((40 + i * 5)) "$i" $((i * 9 + 20)); done
    for i in $(seq 0 59); do make_image "L$i.jpg" 4000 3000 $((200 + i * 7)) $((100 + i)) $((i * 3 + 20)); done
    rm -f "$WORK/p.v" "$WORK/b.v"
    touch "$IMAGES/.done"
fi
echo "$IMAGES"
