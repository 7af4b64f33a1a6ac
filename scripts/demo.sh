#!/usr/bin/env bash
# The main job: build the osprey CLI and run it on the sample image in the repository.
# Usage: scripts/demo.sh   (results go to ./out/)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

swift build --product osprey
osprey="$(swift build --product osprey --show-bin-path)/osprey"
mkdir -p out

echo "==> osprey info Examples/sample.jpg"
"$osprey" info Examples/sample.jpg
echo "==> osprey convert: thumbnail-on-decode, fill-resize, rounded corners, WebP"
"$osprey" convert Examples/sample.jpg out/sample-card.webp --thumbnail 480 --process "resize:320x200:fill,round:24,format:webp:80"
echo "==> osprey convert: greyscale, border, PNG"
"$osprey" convert Examples/sample.jpg out/sample-framed.png --process "downsample:400x400,grayscale,border:6:ff6600"
echo "==> osprey info --json out/sample-card.webp"
"$osprey" info --json out/sample-card.webp
echo "results are in $(pwd)/out"
