#!/usr/bin/env python3
"""The JPEG decode floor of the 4000x3000 photos: CPU per photo of libjpeg-turbo's own `djpeg`
decoding each photo at its DCT scales (1/8, 1/4, 1/2), and the rate no program on these cores can
pass when it decodes at that scale and does nothing else.

    python3 Benchmarks/decode_floor.py [--photos DIR] [--reps N] [--cores C] [--rate NAME=IMG_PER_S ...]

`djpeg` is Debian's libjpeg-turbo-progs (the same libjpeg-turbo libvips and Pillow decode with);
its output goes to /dev/null. CPU per run is user + system from wait4, minus the same for a
128x128 JPEG (process start), median over N interleaved repetitions, averaged over the photos.
Each --rate (a peer's measured rate on the photos) is compared with the ceiling: C cores divided
by the decode CPU, i.e. the best ratio a program could reach over that peer if the decode were
all it did.
"""
import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCALES = ("1/8", "1/4", "1/2")


def cpu_ms(arguments):
    child = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        sys.exit(f"decode_floor.py: {' '.join(arguments)} failed ({status})")
    return (usage.ru_utime + usage.ru_stime) * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--photos", default=os.path.join(ROOT, "Benchmarks", ".work", "large"))
    parser.add_argument("--tiny", default=os.path.join(ROOT, "..", "shared", "testdata", "images", "hopper.jpg"))
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--cores", type=float, default=os.cpu_count())
    parser.add_argument("--rate", action="append", default=[], help="NAME=IMAGES_PER_SECOND")
    args = parser.parse_args()
    photos = sorted(os.path.join(args.photos, n) for n in os.listdir(args.photos) if n.lower().endswith((".jpg", ".jpeg")))
    if not photos:
        sys.exit(f"decode_floor.py: no JPEG photos in {args.photos} (Benchmarks/run.sh makes them)")
    samples = {(scale, photo): [] for scale in SCALES for photo in photos}
    start = []
    for _ in range(args.reps):
        start.append(cpu_ms(["djpeg", "-scale", "1/8", "-outfile", "/dev/null", args.tiny]))
        for scale in SCALES:
            for photo in photos:
                samples[(scale, photo)].append(cpu_ms(["djpeg", "-scale", scale, "-outfile", "/dev/null", photo]))
    start_ms = statistics.median(start)
    version = subprocess.run(["djpeg", "-version"], capture_output=True, text=True).stderr.strip().splitlines()[0]
    print(f"# JPEG decode floor: {version}, {len(photos)} photos, {args.reps} repetitions, {args.cores:g} cores")
    print(f"# process start (djpeg of a 128x128 JPEG), subtracted: {start_ms:.2f} ms")
    rates = [r.split("=", 1) for r in args.rate]
    header = "| scale | decode CPU per photo, ms | ceiling, photos/s |" + "".join(f" ceiling / {name} |" for name, _ in rates)
    print(header)
    print("|" + "---|" * (3 + len(rates)))
    for scale in SCALES:
        per_photo = [statistics.median(samples[(scale, photo)]) - start_ms for photo in photos]
        mean = statistics.mean(per_photo)
        ceiling = args.cores / mean * 1000
        cells = "".join(f" {ceiling / float(rate):.2f}x |" for _, rate in rates)
        print(f"| {scale} | {mean:.2f} ({min(per_photo):.1f}..{max(per_photo):.1f}) | {ceiling:.1f} |{cells}")
    for name, rate in rates:
        print(f"# {name}: {float(rate):g} photos/s measured; 2.5x of it needs <= {args.cores / (2.5 * float(rate)) * 1000:.1f} ms CPU per photo")


if __name__ == "__main__":
    main()
