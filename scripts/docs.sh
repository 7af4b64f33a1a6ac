#!/usr/bin/env bash
# Builds the DocC catalog of the Osprey module (Sources/Osprey/Osprey.docc) with
# swift-docc-plugin; any documentation warning fails it. Output: .build/plugins/Swift-DocC/outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
swift package --disable-sandbox generate-documentation --target Osprey --warnings-as-errors "$@"
