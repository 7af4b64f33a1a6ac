#!/usr/bin/env bash
# The offline gallery (issue 61): an ImageGrid showing ITEMS disk-cached images page by page with
# the network available (warm) and with the pipeline told it is unavailable (offline), after a cold
# run that fills the disk cache from an in-process loopback origin, which then stops. Reports each
# run (time to show every page, pages past 30 s, failed cells, downloads) and the median ratio
# offline/warm. Usage, from anywhere:
#   bash Benchmarks/gallery_offline.sh
# Environment: GALLERY_ITEMS (default 500), GALLERY_ROUNDS (warm/offline pairs, default 3),
# GALLERY_CONFIG (debug or release, default release; a first release build takes 20-40 min on
# 2 cores, a debug one about 15), GALLERY_OUT (a file for the report).
# The images are gallery_images.sh's (20 640x480 and 60 4000x3000 noise JPEGs, made once).
set -euo pipefail
ITEMS="${GALLERY_ITEMS:-500}"
ROUNDS="${GALLERY_ROUNDS:-3}"
CONFIG="${GALLERY_CONFIG:-release}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/setup.sh  # Swift on PATH; libvips, GTK 4 and Xvfb through apt when missing
IMAGES="$(bash "$ROOT/Benchmarks/gallery_images.sh")"
echo "gallery_offline: building GalleryOfflineBench ($CONFIG)" >&2
swift build -c "$CONFIG" --package-path "$ROOT/Benchmarks" --product GalleryOfflineBench >&2
BENCH="$(swift build -c "$CONFIG" --package-path "$ROOT/Benchmarks" --show-bin-path)/GalleryOfflineBench"
export GDK_BACKEND=x11 GSK_RENDERER=cairo GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1
{
    echo "# gallery_offline.sh: $ITEMS items, $ROUNDS rounds, $CONFIG build, $(git rev-parse --short HEAD), $(date -u +%FT%TZ)"
    xvfb-run -a -s "-screen 0 1280x1024x24 -nolisten tcp" "$BENCH" "$IMAGES" "$ITEMS" "$ROUNDS"
} | tee ${GALLERY_OUT:+"$GALLERY_OUT"}
