#!/usr/bin/env bash
# Regenerates Examples/sample.jpg with the libvips command-line tools (apt: libvips-tools).
# The sample is committed; this script only documents how it was made.
set -euo pipefail
out="$(cd "$(dirname "${1:-$0}")" && pwd)/$(basename "${1:-sample.jpg}")"
[ -n "${1:-}" ] || out="$(cd "$(dirname "$0")/.." && pwd)/Examples/sample.jpg"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
vips xyz xyz.v 960 640
vips extract_band xyz.v x.v 0
vips extract_band xyz.v y.v 1
vips linear x.v r.v 0.26 10 --uchar
vips linear y.v g.v 0.25 60 --uchar
vips invert r.v b.v
vips bandjoin "r.v g.v b.v" rgb.v
vips copy rgb.v srgb.v --interpretation srgb
vips text text.v "Osprey" --dpi 600 --font "sans bold"
vips linear text.v ink.v 1 0 --uchar
vips embed ink.v mask.v 120 220 960 640
vips invert mask.v inv.v
vips bandjoin "srgb.v inv.v" rgba.v
vips flatten rgba.v flat.v --background "255 255 255"
vips jpegsave flat.v "$out" --Q 85 --strip
echo "wrote $out"
