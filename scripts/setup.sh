#!/usr/bin/env bash
# Makes a fresh Debian/Ubuntu machine ready to build Osprey: installs libvips (and pkg-config),
# GTK 4 and Xvfb through apt when missing and puts a Swift toolchain on PATH. Sourced by demo.sh and test.sh.
set -euo pipefail

if ! command -v swift >/dev/null 2>&1; then
    for dir in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
        [ -x "$dir/swift" ] && export PATH="$dir:$PATH" && break
    done
fi
command -v swift >/dev/null 2>&1 || { echo "error: no Swift toolchain found (install Swift 6 from swift.org)" >&2; exit 1; }

# libvips for Osprey; GTK 4 for OspreyGTK and the gallery; Xvfb for their tests without a display.
packages=()
pkg-config --exists vips 2>/dev/null || packages+=(libvips-dev pkg-config)
pkg-config --exists gtk4 2>/dev/null || packages+=(libgtk-4-dev)
command -v Xvfb >/dev/null 2>&1 || packages+=(xvfb)
# python3 with venv for the S3 tests' moto server and botocore (scripts/s3-venv.sh).
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || packages+=(python3-venv)
if [ "${#packages[@]}" -gt 0 ]; then
    echo "==> installing ${packages[*]} with apt" >&2
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    # With recommends: the configuration the GTK tests were run in (Xvfb's fonts and xauth, GTK's
    # icon theme for the spinner).
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${packages[@]}" >/dev/null
fi
