#!/usr/bin/env python3
"""Interleaved A/B of whole `osprey prefetch` processes, scenario 8's job, for two or more builds.

    python3 Benchmarks/cli_ab.py [--rounds N] [--set small|large] [--urls N] NAME=BINARY NAME=BINARY...

Starts nginx (apt: nginx-light) on a loopback port serving the test images (/small/) and the
4000x3000 photos (/large/, Benchmarks/.work/large, made by run.sh), then runs each binary in turn,
round after round (the order rotates every round), as `osprey prefetch --input urls.txt
--concurrency 4 --process "thumbnail:256,format:jpeg:80" --cache-dir FRESH`, with URLs unique to
the run, the caches on a fresh file system (Benchmarks/scratchfs.py). Reports per binary the median rate and CPU per image (user + system from wait4), and
per binary after the first its per-round ratios of rate and of CPU per image to the first's:
median [min..max].
Environment: OSPREY_TESTDATA (default Tests/Fixtures/images of the repository).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks", "server"))
from server_bench import Nginx, scratchfs  # noqa: E402
SMALL = os.environ.get("OSPREY_TESTDATA", os.path.join(ROOT, "Tests", "Fixtures", "images"))
LARGE = os.path.join(ROOT, "Benchmarks", ".work", "large")
SPEC = "thumbnail:256,format:jpeg:80"
# Every test image, as scenario 8's small set (stock libvips thumbnails them all).
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif")


def files(image_set):
    directory = SMALL if image_set == "small" else LARGE
    return sorted(n for n in os.listdir(directory) if n.lower().endswith(IMAGE_SUFFIXES) and not n.startswith("."))


def run(binary, urls, scratch):
    cache = tempfile.mkdtemp(dir=scratch)
    listing = os.path.join(cache, "urls.txt")
    with open(listing, "w") as f:
        f.write("\n".join(urls) + "\n")
    start = time.monotonic()
    child = subprocess.Popen([binary, "prefetch", "--input", listing, "--concurrency", "4", "--process", SPEC,
                              "--cache-dir", os.path.join(cache, "c")], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - start
    if status != 0:
        sys.exit(f"cli_ab.py: {binary} exited with status {status}")
    # The caches stay until the end (on the fresh file system that is no longer needed for
    # speed: see Benchmarks/scratchfs.py).
    return len(urls) / seconds, (usage.ru_utime + usage.ru_stime) / len(urls) * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--set", choices=["small", "large"], default="small")
    parser.add_argument("--urls", type=int, help="URLs per run (default 420 small, 96 large)")
    parser.add_argument("binaries", nargs="+", help="NAME=BINARY")
    args = parser.parse_args()
    sides = [b.split("=", 1) for b in args.binaries]
    count = args.urls or (420 if args.set == "small" else 96)
    names = files(args.set)
    scratch = scratchfs.up("/var/tmp", "osprey-cli-ab.")
    nginx = Nginx(scratch, "nginx", f"        location /small/ {{ alias {os.path.abspath(SMALL)}/; }}\n"
                  f"        location /large/ {{ alias {LARGE}/; }}")
    port = nginx.port
    results = {name: [] for name, _ in sides}
    try:
        nginx.wait(f"/{args.set}/{names[0]}")
        for round_index in range(args.rounds):
            order = sides[round_index % len(sides):] + sides[:round_index % len(sides)]
            for name, binary in order:
                urls = [f"http://127.0.0.1:{port}/{args.set}/{names[i % len(names)]}?r={name}-{round_index}-{i}"
                        for i in range(count)]
                results[name].append(run(binary, urls, scratch))
            line = "  ".join(f"{name} {results[name][-1][0]:.1f}/s {results[name][-1][1]:.2f} ms" for name, _ in sides)
            print(f"round {round_index + 1}: {line}", flush=True)
    finally:
        nginx.stop()
        scratchfs.down(scratch)
    base = sides[0][0]
    print(f"\n{args.set}: {count} URLs, {args.rounds} rounds, spec {SPEC}")
    for name, _ in sides:
        rates = [r for r, _ in results[name]]
        cpu = [c for _, c in results[name]]
        line = f"{name}: {statistics.median(rates):.1f} img/s, CPU {statistics.median(cpu):.2f} ms/img"
        if name != base:
            ratios = sorted(r / b for (r, _), (b, _) in zip(results[name], results[base]))
            line += f", {statistics.median(ratios):.3f}x {base} [{ratios[0]:.2f}..{ratios[-1]:.2f}]"
            cpu_ratios = sorted(c / b for (_, c), (_, b) in zip(results[name], results[base]))
            line += f", CPU {statistics.median(cpu_ratios):.3f}x [{cpu_ratios[0]:.2f}..{cpu_ratios[-1]:.2f}]"
        print(line)


if __name__ == "__main__":
    main()
