#!/usr/bin/env python3
"""Osprey's answers next to thumbor 7.8's for the same thumbor URLs: size, format and pixels.

    python3 Tests/ThumborParity/thumbor_parity.py --osprey .build/release/osprey \
        --thumbor Benchmarks/.work/thumbor-venv/bin/thumbor [--images Tests/Fixtures/images]

Starts a loopback origin serving the test images (and a nine-patch frame it draws), thumbor (unsafe
URLs, no result storage) and `osprey serve` (loopback sources allowed), asks both for every case
below and prints one line per case: each server's status, size and format, and the mean absolute
difference of their pixels (0-255, RGBA, the images compared at thumbor's size when both are
200). A resize alone differs by a few levels (Pillow and libvips resample differently), so each
filter case is printed beside the plain resize it is applied to: what a filter adds to that is
the filter's own difference. Needs Pillow, which thumbor's virtualenv has (run it with that
virtualenv's python, or any python with Pillow). Not run in CI.
"""
import argparse
import http.server
import io
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request

from PIL import Image, ImageChops, ImageStat

from parity_support import free_port, wait_ready

CURVE = ("[(0,0),(40,59),(255,255)],"
         "[(32,59),(64,80),(92,111),(128,153),(140,169),(164,201),(192,214),(224,215),(240,214),(255,212)],"
         "[(34,41),(64,51),(92,76),(128,112),(140,124),(164,147),(192,180),(224,216),(240,236),(255,255)],"
         "[(40,46),(64,55),(92,83),(128,127),(140,144),(164,174),(192,197),(224,199),(240,197),(255,198)]")

# (name, path after the host; {png} and {jpg} are source URLs, {frame} the nine-patch's, {host}
# the origin's host:port) — the plain resize each filter is compared beside is "resize".
CASES = [
    # Geometry: sizes, modes, alignment, manual crops, flips.
    ("fit-in", "/unsafe/fit-in/300x300/filters:format(png)/{jpg}"),
    ("full-fit-in", "/unsafe/full-fit-in/300x300/filters:format(png)/{jpg}"),
    ("adaptive-fit-in", "/unsafe/adaptive-fit-in/200x300/filters:format(png)/{jpg}"),
    ("width only", "/unsafe/300x0/filters:format(png)/{jpg}"),
    ("height only", "/unsafe/0x100/filters:format(png)/{jpg}"),
    ("orig height", "/unsafe/300xorig/filters:format(png)/{jpg}"),
    ("flipped both", "/unsafe/-300x-200/filters:format(png)/{jpg}"),
    ("left top", "/unsafe/200x200/left/top/filters:format(png)/{jpg}"),
    ("right bottom", "/unsafe/200x200/right/bottom/filters:format(png)/{jpg}"),
    ("manual crop", "/unsafe/10x20:410x320/200x0/filters:format(png)/{jpg}"),
    ("enlarged", "/unsafe/1000x800/filters:format(png)/{jpg}"),
    ("no_upscale", "/unsafe/1000x800/filters:format(png):no_upscale()/{jpg}"),
    ("fit-in no enlarge", "/unsafe/fit-in/1000x1000/filters:format(png)/{jpg}"),
    ("fit-in upscale()", "/unsafe/fit-in/1000x1000/filters:format(png):upscale()/{jpg}"),
    ("stretch", "/unsafe/300x100/filters:format(png):stretch()/{jpg}"),
    ("proportion", "/unsafe/300x200/filters:format(png):proportion(0.5)/{jpg}"),
    ("trim", "/unsafe/trim/filters:format(png)/{png}"),
    ("trim bottom-right", "/unsafe/trim:bottom-right:20/filters:format(png)/{png}"),
    ("trim top-left on a JPEG", "/unsafe/trim:top-left:40/filters:format(png)/{jpg}"),
    ("PNG with alpha", "/unsafe/200x150/filters:format(png)/{png}"),
    ("fill(blur)", "/unsafe/fit-in/300x300/filters:format(png):fill(blur)/{jpg}"),
    ("fill(transparent)", "/unsafe/fit-in/300x300/filters:format(png):fill(transparent)/{jpg}"),
    ("background_color", "/unsafe/200x150/filters:format(png):background_color(ff0000)/{png}"),
    ("watermark", "/unsafe/300x200/filters:format(png):watermark({frame},10,-10,30)/{jpg}"),
    ("sharpen", "/unsafe/300x200/filters:format(png):sharpen(2,1,true)/{jpg}"),
    # Pixel filters, each beside the plain resize it is applied to.
    ("resize", "/unsafe/300x200/filters:format(png)/{jpg}"),
    ("rgb", "/unsafe/300x200/filters:format(png):rgb(20,-10,5)/{jpg}"),
    ("colorize", "/unsafe/300x200/filters:format(png):colorize(40,20,60,ff8800)/{jpg}"),
    ("curve", "/unsafe/300x200/filters:format(png):curve(" + CURVE + ")/{jpg}"),
    ("equalize", "/unsafe/300x200/filters:format(png):equalize()/{jpg}"),
    ("convolution blur", "/unsafe/300x200/filters:format(png):convolution(1;2;1;2;4;2;1;2;1,3,true)/{jpg}"),
    ("convolution edges", "/unsafe/300x200/filters:format(png):convolution(-1;-1;-1;-1;8;-1;-1;-1;-1,3,false)/{jpg}"),
    ("noise (seeded)", "/unsafe/300x200/filters:format(png):noise(20,5)/{jpg}"),
    ("brightness", "/unsafe/300x200/filters:format(png):brightness(20)/{jpg}"),
    ("brightness -30", "/unsafe/300x200/filters:format(png):brightness(-30)/{jpg}"),
    ("contrast", "/unsafe/300x200/filters:format(png):contrast(20)/{jpg}"),
    ("contrast -50", "/unsafe/300x200/filters:format(png):contrast(-50)/{jpg}"),
    ("saturation 0.5", "/unsafe/300x200/filters:format(png):saturation(0.5)/{jpg}"),
    ("saturation 1.5", "/unsafe/300x200/filters:format(png):saturation(1.5)/{jpg}"),
    ("saturation -40 (documented as a percentage)", "/unsafe/300x200/filters:format(png):saturation(-40)/{jpg}"),
    ("grayscale", "/unsafe/300x200/filters:format(png):grayscale()/{jpg}"),
    ("blur", "/unsafe/300x200/filters:format(png):blur(3)/{jpg}"),
    ("rotate 90", "/unsafe/300x200/filters:format(png):rotate(90)/{jpg}"),
    ("rotate 270", "/unsafe/300x200/filters:format(png):rotate(270)/{jpg}"),
    ("rotate 45 (ignored)", "/unsafe/300x200/filters:format(png):rotate(45)/{jpg}"),
    ("round_corner", "/unsafe/300x200/filters:format(png):round_corner(30,255,255,255)/{jpg}"),
    ("fill", "/unsafe/fit-in/300x300/filters:format(png):fill(ff0000)/{jpg}"),
    ("red_eye", "/unsafe/300x200/filters:format(png):red_eye()/{jpg}"),
    ("frame", "/unsafe/300x200/filters:format(png):frame({frame})/{jpg}"),
    ("extract_focal", "/unsafe/300x200/filters:format(png):extract_focal()/{host}/unsafe/100x50:400x250/{jpg_quoted}"),
    ("focal (what extract_focal means)", "/unsafe/300x200/filters:format(png):focal(100x50:400x250)/{jpg}"),
    ("autojpg(false) on a PNG", "/unsafe/200x150/filters:autojpg(false)/{png}"),
    ("PNG without autojpg", "/unsafe/200x150/{png}"),
]


def nine_patch(path):
    """A 24x24 nine-patch: a 4-pixel dark green ring around a clear middle, padding 4 a side."""
    im = Image.new("RGBA", (24, 24), (0, 0, 0, 0))
    px = im.load()
    for i in range(10, 14):
        px[i, 0] = px[0, i] = (0, 0, 0, 255)
    for i in range(5, 19):
        px[i, 23] = px[23, i] = (0, 0, 0, 255)
    for y in range(1, 23):
        for x in range(1, 23):
            if x <= 4 or x >= 19 or y <= 4 or y >= 19:
                px[x, y] = (0, 100, 0, 255)
    im.save(path)


def get(port, path):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def describe(status, kind, body):
    if status != 200:
        return f"{status} {body[:60]!r}", None
    im = Image.open(io.BytesIO(body))
    return f"200 {im.width}x{im.height} {kind.split('/')[-1]}", im


def difference(a, b):
    a, b = a.convert("RGBA"), b.convert("RGBA")
    if a.size != b.size:
        b = b.resize(a.size)
    return sum(ImageStat.Stat(ImageChops.difference(a, b)).mean) / 4


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--osprey", required=True)
    p.add_argument("--thumbor", required=True)
    p.add_argument("--images", default=os.environ.get("OSPREY_TESTDATA") or os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "Fixtures", "images"))
    p.add_argument("--jpg", default="rocket.jpg")
    p.add_argument("--png", default="coffee.png")
    args = p.parse_args()

    work = tempfile.mkdtemp(prefix="thumbor-parity-")
    processes = []
    try:
        origin_dir = os.path.join(work, "origin")
        os.makedirs(origin_dir)
        for name in (args.jpg, args.png):
            shutil.copy(os.path.join(args.images, name), origin_dir)
        nine_patch(os.path.join(origin_dir, "frame.png"))
        handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=origin_dir, **k)  # noqa: E731
        http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
        origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=origin.serve_forever, daemon=True).start()
        host = f"127.0.0.1:{origin.server_address[1]}"

        tport, oport = free_port(), free_port()
        conf = os.path.join(work, "thumbor.conf")
        with open(conf, "w") as f:
            f.write(f"RESULT_STORAGE = None\nSTORAGE = 'thumbor.storages.no_storage'\n"
                    f"LOADER = 'thumbor.loaders.http_loader'\nALLOW_UNSAFE_URL = True\nQUALITY = 80\n")
        processes.append(subprocess.Popen([args.thumbor, "--ip", "127.0.0.1", "--port", str(tport), "--conf", conf,
                                           "--log-level", "error"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        processes.append(subprocess.Popen([args.osprey, "serve", "--host", "127.0.0.1", "--port", str(oport),
                                           "--allow-loopback-sources", "--cache-dir", os.path.join(work, "cache")],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_ready(f"http://127.0.0.1:{tport}/healthcheck", processes[0])
        wait_ready(f"http://127.0.0.1:{oport}/health", processes[1])

        sources = {"jpg": f"http://{host}/{args.jpg}", "png": f"http://{host}/{args.png}",
                   "jpg_quoted": urllib.parse.quote(f"http://{host}/{args.jpg}", safe=""),
                   "frame": f"http://{host}/frame.png", "host": host}
        print(f"# thumbor parity: {args.jpg} and {args.png}; mean absolute difference of RGBA, 0-255")
        print("| case | thumbor | osprey | difference |")
        print("|---|---|---|---|")
        for name, template in CASES:
            path = template.format(**sources)
            t_text, t_image = describe(*get(tport, path))
            o_text, o_image = describe(*get(oport, path))
            diff = f"{difference(t_image, o_image):.2f}" if t_image and o_image else "-"
            print(f"| {name} | {t_text} | {o_text} | {diff} |")
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
