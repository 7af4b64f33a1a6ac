#!/usr/bin/env bash
# The whole-program example of the DocC article "Loading into GTK widgets", built as a newcomer
# would: a fresh SwiftPM package in a temporary folder, depending on this repository by path under
# the folder name `osprey` (a path dependency is named after its folder), its main.swift the
# article's first swift block as written. Then it runs under Xvfb, its window gets the close a
# window manager sends (WM_DELETE_WINDOW, python-xlib in a venv under Benchmarks/.work), and the
# program must exit 0 on its own. Usage: bash scripts/gtk-docs-example.sh (first build 15-30 min:
# the package builds its dependencies afresh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/setup.sh  # Swift on PATH; libvips, GTK 4 and Xvfb through apt when missing
venv=Benchmarks/.work/xlib-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import Xlib' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q python-xlib
fi
work="$(mktemp -d)"
xvfb_pid=""
cleanup() { [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/deps" "$work/app/Sources/Photo"
ln -s "$ROOT" "$work/deps/osprey"
cat >"$work/app/Package.swift" <<'SWIFT'
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Photo",
    dependencies: [.package(path: "../deps/osprey")],
    targets: [.executableTarget(name: "Photo", dependencies: [.product(name: "OspreyGTK", package: "osprey")])]
)
SWIFT
# The article's first swift block.
awk '/^```swift/ && !done { inside = 1; next } inside && /^```/ { inside = 0; done = 1 } inside' \
    Sources/Osprey/Osprey.docc/LoadingIntoGTKWidgets.md >"$work/app/Sources/Photo/main.swift"
grep -q 'g_application_run' "$work/app/Sources/Photo/main.swift" || { echo "error: the article's first swift block is not the whole program" >&2; exit 1; }
swift build --package-path "$work/app" >&2
display=""
for n in $(seq 90 189); do
    if [ ! -e "/tmp/.X$n-lock" ] && [ ! -e "/tmp/.X11-unix/X$n" ]; then display=":$n"; break; fi
done
Xvfb "$display" -screen 0 1280x1024x24 -nolisten tcp >/dev/null 2>&1 &
xvfb_pid=$!
for _ in $(seq 1 100); do [ -e "/tmp/.X11-unix/X${display#:}" ] && break; sleep 0.1; done
export DISPLAY="$display" GDK_BACKEND=x11 GSK_RENDERER=cairo GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1
timeout 60 "$work/app/.build/debug/Photo" 2>"$work/photo.log" &
photo=$!
"$venv/bin/python" scripts/gtk-docs-example/close_window.py
status=0
wait "$photo" || status=$?
[ "$status" -eq 0 ] || { echo "error: the example did not quit when its window closed (status $status)" >&2; cat "$work/photo.log" >&2; exit 1; }
echo "gtk-docs-example: the article's example compiled from an outside package and quit when its window closed"
