#!/usr/bin/env bash
# Makes a fresh Debian/Ubuntu machine ready to build Osprey: installs libvips (and pkg-config)
# through apt when missing and puts a Swift toolchain on PATH. Sourced by demo.sh and test.sh.
set -euo pipefail

if ! command -v swift >/dev/null 2>&1; then
    for dir in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
        [ -x "$dir/swift" ] && export PATH="$dir:$PATH" && break
    done
fi
command -v swift >/dev/null 2>&1 || { echo "error: no Swift toolchain found (install Swift 6 from swift.org)" >&2; exit 1; }

if ! pkg-config --exists vips 2>/dev/null; then
    echo "==> installing libvips-dev and pkg-config with apt" >&2
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends libvips-dev pkg-config >/dev/null
fi
