#!/usr/bin/env bash
# Runs the gallery (osprey-gallery) over a loopback origin of generated images and leaves a
# screenshot: under Xvfb when there is no display. Usage:
#   bash scripts/gallery.sh [SCREENSHOT.png] [COUNT]
# (default docs/images/gallery.png, 60 images). Images are made with the vips CLI (libvips-tools)
# and served by the tests' loopback origin (`OspreyOrigin`, Tests/OspreyTestSupport) on 127.0.0.1; the
# cache is a fresh temporary directory.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
shot="${1:-docs/images/gallery.png}"
count="${2:-60}"
command -v vips >/dev/null 2>&1 || { echo "error: the vips CLI is needed (apt install libvips-tools)" >&2; exit 1; }

work="$(mktemp -d)"
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

# Coloured noise, a different seed and tint per image, 4:3 and a few 3:4 ones.
mkdir -p "$work/images"
for i in $(seq 0 $((count - 1))); do
    if [ $((i % 7)) -eq 3 ]; then w=480; h=640; else w=640; h=480; fi
    for band in 0 1 2; do
        vips perlin "$work/p$band.v" $w $h --cell-size $((48 + (i * 13 + band * 29) % 96)) --seed $((i * 3 + band))
        vips linear "$work/p$band.v" "$work/b$band.v" 120 $(((i * 47 + band * 85) % 200 + 28)) --uchar
    done
    vips bandjoin "$work/b0.v $work/b1.v $work/b2.v" "$work/images/$(printf '%03d' "$i").jpg[Q=85]"
done

swift build --product OspreyOrigin >&2
# The origin prints `listening PORT`, and exits with this script (or at the kill of the EXIT trap).
coproc ORIGIN { exec "$(swift build --show-bin-path)/OspreyOrigin" "$work/images"; }
server_pid=$ORIGIN_PID
read -r -t 60 _ port <&"${ORIGIN[0]}" || { echo "error: the loopback origin did not start" >&2; exit 1; }
for i in $(seq 0 $((count - 1))); do printf 'http://127.0.0.1:%s/%03d.jpg\n' "$port" "$i"; done >"$work/urls.txt"

swift build --product osprey-gallery >&2
gallery="$(swift build --show-bin-path)/osprey-gallery"
mkdir -p "$(dirname "$shot")"
script="wait;scroll:$((count / 2));wait;scroll:0;wait;screenshot:$shot;quit"
export GDK_BACKEND=x11 GSK_RENDERER=cairo GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1
run=("$gallery" --input "$work/urls.txt" --cell 200x150 --cache-dir "$work/cache" --script "$script")
if [ -z "${DISPLAY:-}" ]; then
    xvfb-run -a -s "-screen 0 1280x1024x24 -nolisten tcp" "${run[@]}"
else
    "${run[@]}"
fi
# An 8-bit palette keeps the committed screenshot small (about 250 KB instead of 650).
vips copy "$shot" "$work/palette.png[palette,compression=9]" && cp "$work/palette.png" "$shot"
echo "screenshot: $shot" >&2
