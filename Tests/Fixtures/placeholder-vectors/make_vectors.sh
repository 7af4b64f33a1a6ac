#!/usr/bin/env bash
# Makes Tests/OspreyTests/Placeholders/PlaceholderVectors.swift: the outputs of the reference
# ThumbHash and BlurHash implementations for rasters of the test images and synthetic rasters.
#
#   bash Tests/Fixtures/placeholder-vectors/make_vectors.sh IMAGES_DIR THUMBHASH_JS
#
# IMAGES_DIR: the test images (the folder the tests' TestData reads). THUMBHASH_JS: js/thumbhash.js
# of evanw/thumbhash (a checkout made elsewhere; it is only run, never copied here). Needs python3
# (a venv with PyPI's blurhash 1.1.5, thumbhash 0.1.2 and Pillow is made in a temporary folder) and
# node >= 18.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
images="$1"
reference="$2"
out="$here/../../OspreyTests/Placeholders/PlaceholderVectors.swift"
venv="$(mktemp -d)/venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet blurhash==1.1.5 thumbhash==0.1.2 pillow
"$venv/bin/python" "$here/make_vectors.py" "$images" "$reference" "$here/thumbhash_js.mjs" > "$out"
echo "wrote $out" >&2
