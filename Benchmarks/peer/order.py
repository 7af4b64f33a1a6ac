#!/usr/bin/env python3
"""How much the order of a Pillow script's steps costs on the 4000x3000 photos.

    Benchmarks/.work/venv/bin/python Benchmarks/peer/order.py [DIR] [ROUNDS]

peer.py calls `thumbnail` first, so Pillow's JPEG draft decodes at a DCT scale (1/4 here). A script
that first calls `ImageOps.exif_transpose` (which copies the image) or `convert("RGB")` decodes
every pixel before the thumbnail. Prints the CPU milliseconds per photo of each order, one thread,
in process, rounds interleaved: the median, then every round.
"""
import glob
import io
import os
import statistics
import sys
import time

from PIL import Image, ImageOps

from peer import thumbnail

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def transpose_first(data):
    im = ImageOps.exif_transpose(Image.open(io.BytesIO(data)))
    im.thumbnail((256, 256))
    if im.mode != "RGB":
        im = im.convert("RGB")
    out = io.BytesIO()
    im.save(out, "JPEG", quality=80)
    return out.getvalue()


def convert_first(data):
    im = Image.open(io.BytesIO(data)).convert("RGB")
    im.thumbnail((256, 256))
    out = io.BytesIO()
    im.save(out, "JPEG", quality=80)
    return out.getvalue()


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".work", "large")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    datas = [open(path, "rb").read() for path in sorted(glob.glob(os.path.join(directory, "*.jpg")))]
    if not datas:
        sys.exit(f"order.py: no JPEGs in {directory}")
    orders = [("thumbnail first (peer.py)", thumbnail), ("exif_transpose first", transpose_first),
              ("convert('RGB') first", convert_first)]
    times = {name: [] for name, _ in orders}
    for _ in range(rounds):
        for name, work in orders:
            start = time.process_time()
            for data in datas:
                work(data)
            times[name].append((time.process_time() - start) / len(datas) * 1000)
    print(f"{len(datas)} photos, {rounds} rounds, CPU ms per photo (one thread)")
    for name, _ in orders:
        samples = ", ".join(f"{t:.1f}" for t in times[name])
        print(f"{name}: {statistics.median(times[name]):.1f} ({samples})")


if __name__ == "__main__":
    main()
