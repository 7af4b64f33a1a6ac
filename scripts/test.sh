#!/usr/bin/env bash
# Runs the whole test suite. Extra arguments go to `swift test` (e.g. --sanitize=thread).
# Test images are read from Tests/Fixtures/images (override with OSPREY_TESTDATA=<directory>).
# With --sanitize=thread: scripts/tsan-suppressions.txt is used, and the tests run one at a time
# (--no-parallel; about 8 minutes on 2 cores): all at once under TSan, some wait past their time limits.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
# The reference decoders the format tests compare with (FormatReferenceTests): djxl/cjxl,
# rsvg-convert, pdftoppm/pdfunite.
tools=()
command -v djxl >/dev/null 2>&1 || tools+=(libjxl-tools)
command -v rsvg-convert >/dev/null 2>&1 || tools+=(librsvg2-bin)
command -v pdftoppm >/dev/null 2>&1 || tools+=(poppler-utils)
# The GIO network test's namespace (below) sets routes with iproute2's `ip`.
[ "$(id -u)" -ne 0 ] || command -v ip >/dev/null 2>&1 || tools+=(iproute2)
# The GIO power-saver test's private system bus (below): dbus-daemon, and GLib's D-Bus from Python
# for its stand-in power-profiles service.
[ -x /usr/bin/dbus-daemon ] || tools+=(dbus-daemon)
/usr/bin/python3 -c 'from gi.repository import Gio' >/dev/null 2>&1 || tools+=(python3-gi)
if [ "${#tools[@]}" -gt 0 ]; then
    echo "==> installing ${tools[*]} with apt" >&2
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${tools[@]}" >/dev/null
fi
swift build --build-tests "$@"
if [[ " $* " == *" --sanitize=thread "* ]]; then
    export TSAN_OPTIONS="suppressions=$PWD/scripts/tsan-suppressions.txt ${TSAN_OPTIONS:-}"
    swift test --skip-build --no-parallel "$@"
else
    swift test --skip-build "$@"
fi
# The GIO network test (GTKTargetTests/gioNetworkComesBack) removes and adds the default route, which
# GNetworkMonitor watches: it runs again in a network namespace of its own (unshare -n, as root),
# marked OSPREY_NETNS=1; elsewhere it is skipped.
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1; then
    unshare -n sh -c 'ip link set lo up && OSPREY_NETNS=1 exec swift test --skip-build --filter GTKTargetTests/gio "$@"' sh "$@"
else
    echo "==> skipped the GIO network test: it needs root, unshare and ip for a network namespace" >&2
fi
# The GIO power-saver test (GTKTargetTests/gioPowerSaverFromDBus) starts a D-Bus system bus of its
# own (dbus-daemon) with a stand-in for power-profiles-daemon that GPowerProfileMonitor watches. GIO
# connects to the system bus once per process, so it runs alone, marked OSPREY_PRIVATE_SYSTEM_BUS=1.
OSPREY_PRIVATE_SYSTEM_BUS=1 swift test --skip-build --filter GTKTargetTests/gioPowerSaverFromDBus "$@"
