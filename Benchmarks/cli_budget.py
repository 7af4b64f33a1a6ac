#!/usr/bin/env python3
"""Where scenario 8's gap between `osprey prefetch` and the in-process limit goes: the same job run
whole and with parts taken away, interleaved round by round.

    python3 Benchmarks/cli_budget.py [--rounds N] [--set small|large] [--osprey BIN] [--bench BIN]

Per round, on one image set (scenario 8's URL count, its spec, 4 at a time, fresh caches on a
fresh file system, Benchmarks/scratchfs.py):
- http:  `osprey prefetch` of unique URLs from an nginx origin on the same cores (scenario 8 itself);
- file:  `osprey prefetch` of unique local paths to the same files (hard links): no origin, no HTTP;
- quarter: `osprey prefetch` of the first quarter of those URLs (new ones): with `http`, the
  fixed cost of a run (the wall time at zero URLs on the line through the two run sizes: process
  start, warm-up such as the first colour transforms and the first pages of each heap, the tail);
- start: `osprey prefetch` of an empty list, 5 times: process start and exit;
- receive: `OspreyBench receive8` (Osprey's downloader receiving the same URLs, bodies dropped);
- limit: `OspreyBench limit8 DIR 2 2 cli` (the CLI's image work on the bytes in memory, 2 threads;
  the second round, the first warms up).
nginx's own CPU during `http` comes from /proc. Prints medians and, from them, the ratios to the
limit with parts taken away and the CPU per image each part adds.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks", "server"))
import cli_ab  # noqa: E402
from server_bench import Nginx, scratchfs  # noqa: E402

RELEASE = os.path.join(ROOT, "Benchmarks", ".build", "release")


def prefetch(osprey, sources, scratch):
    """Runs `osprey prefetch` over `sources`; returns (wall seconds, CPU seconds)."""
    work = tempfile.mkdtemp(dir=scratch)
    listing = os.path.join(work, "sources.txt")
    with open(listing, "w") as f:
        f.write("".join(s + "\n" for s in sources))
    started = time.monotonic()
    child = subprocess.Popen([osprey, "prefetch", "--input", listing, "--concurrency", "4", "--process", cli_ab.SPEC,
                              "--cache-dir", os.path.join(work, "c")], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - started
    if status != 0:
        sys.exit(f"cli_budget.py: osprey prefetch exited with status {status}")
    return seconds, usage.ru_utime + usage.ru_stime


def nginx_cpu():
    """CPU seconds of every nginx worker so far."""
    total = 0
    pids = subprocess.run(["pgrep", "-f", "nginx: worker"], capture_output=True, text=True).stdout.split()
    for pid in pids:
        try:
            fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def limit(bench, directory):
    """The CLI's image work in process: (images/s, CPU ms per image) of the second of two rounds
    (the first warms the process up, as scenario 8's harness is warm)."""
    out = subprocess.run([bench, "limit8", directory, "2", "2", "cli"], capture_output=True, text=True, check=True,
                         env=dict(os.environ, VIPS_CONCURRENCY="1")).stdout
    m = re.search(r"^1 \| ([\d.]+) \(([\d.]+)\)", out, re.M)
    return float(m.group(1)), float(m.group(2))


def receive(bench, base, count, names):
    """Osprey's downloader alone: CPU ms per URL."""
    out = subprocess.run([bench, "receive8", base, str(count), *names], capture_output=True, text=True, check=True).stdout
    return float(re.search(r"([\d.]+) ms CPU per URL", out).group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--set", choices=["small", "large"], default="small")
    parser.add_argument("--osprey", default=os.path.join(RELEASE, "osprey"))
    parser.add_argument("--bench", default=os.path.join(RELEASE, "OspreyBench"))
    args = parser.parse_args()
    directory = cli_ab.SMALL if args.set == "small" else cli_ab.LARGE
    names = cli_ab.files(args.set)
    count = 420 if args.set == "small" else 96
    scratch = scratchfs.up("/var/tmp", "osprey-cli-budget.")
    nginx = Nginx(scratch, "nginx", f"        location /{args.set}/ {{ alias {os.path.abspath(directory)}/; }}")
    rows = {k: [] for k in ("http", "http_cpu", "nginx_cpu", "quarter", "quarter_cpu", "file", "file_cpu", "start",
                            "start_cpu", "receive", "limit", "limit_cpu")}
    try:
        nginx.wait(f"/{args.set}/{names[0]}")
        base = f"http://127.0.0.1:{nginx.port}/{args.set}"
        # Local copies on the scratch file system, hard-linked to a unique path per source and round.
        copies = os.path.join(scratch, "copies")
        os.mkdir(copies)
        for name in names:
            shutil.copyfile(os.path.join(directory, name), os.path.join(copies, name))
        empty = []
        for r in range(args.rounds):
            links = os.path.join(scratch, f"links{r}")
            os.mkdir(links)
            paths = []
            for i in range(count):
                name = names[i % len(names)]
                path = os.path.join(links, f"{i}-{name}")
                os.link(os.path.join(copies, name), path)
                paths.append(path)
            before = nginx_cpu()
            seconds, cpu = prefetch(args.osprey, [f"{base}/{names[i % len(names)]}?r=b{r}-{i}" for i in range(count)], scratch)
            rows["nginx_cpu"].append((nginx_cpu() - before) * 1000 / count)
            rows["http"].append(count / seconds)
            rows["http_cpu"].append(cpu * 1000 / count)
            quarter = count // 4
            seconds, cpu = prefetch(args.osprey, [f"{base}/{names[i % len(names)]}?r=q{r}-{i}" for i in range(quarter)], scratch)
            rows["quarter"].append(seconds)
            rows["quarter_cpu"].append(cpu)
            seconds, cpu = prefetch(args.osprey, paths, scratch)
            rows["file"].append(count / seconds)
            rows["file_cpu"].append(cpu * 1000 / count)
            starts = [prefetch(args.osprey, empty, scratch) for _ in range(5)]
            rows["start"].append(statistics.median(s for s, _ in starts))
            rows["start_cpu"].append(statistics.median(c for _, c in starts))
            rows["receive"].append(receive(args.bench, base, count, names))
            rate, cpu = limit(args.bench, directory)
            rows["limit"].append(rate)
            rows["limit_cpu"].append(cpu)
            print(f"round {r + 1}: " + "  ".join(f"{k} {v[-1]:.3f}" for k, v in rows.items()), flush=True)
    finally:
        nginx.stop()
        scratchfs.down(scratch)
    m = {k: statistics.median(v) for k, v in rows.items()}
    lim = m["limit"]
    wall_file = count / m["file"]
    # The line through (quarter, its wall) and (count, its wall): per-URL wall and the fixed part.
    quarter = count // 4
    per_url = (count / m["http"] - m["quarter"]) / (count - quarter)
    fixed = count / m["http"] - count * per_url
    per_url_cpu = (m["http_cpu"] * count / 1000 - m["quarter_cpu"]) / (count - quarter)
    fixed_cpu = m["http_cpu"] * count / 1000 - count * per_url_cpu
    print(f"\n{args.set}: {count} sources, {args.rounds} rounds, spec {cli_ab.SPEC}; medians")
    print(f"  limit (image work in process)        {lim:7.1f} img/s  {m['limit_cpu']:.3f} ms CPU/img")
    print(f"  osprey prefetch, nginx origin        {m['http']:7.1f} img/s  {m['http_cpu']:.3f} ms CPU/img  {m['http'] / lim:.3f}x limit")
    print(f"  nginx origin, fixed cost taken off    {1 / per_url:7.1f} img/s  {per_url_cpu * 1000:.3f} ms CPU/img  "
          f"{1 / per_url / lim:.3f}x limit (fixed: {fixed * 1000:.0f} ms wall, {fixed_cpu * 1000:.0f} ms CPU)")
    print(f"  osprey prefetch, local files         {m['file']:7.1f} img/s  {m['file_cpu']:.3f} ms CPU/img  {m['file'] / lim:.3f}x limit")
    print(f"  local files, process start taken off {count / (wall_file - m['start']):7.1f} img/s"
          f"                     {count / (wall_file - m['start']) / lim:.3f}x limit")
    print("  CPU per image added to the limit's:")
    print(f"    process start and exit ({m['start'] * 1000:.1f} ms wall, {m['start_cpu'] * 1000:.1f} ms CPU) over {count}: "
          f"{m['start_cpu'] * 1000 / count:.3f} ms")
    print(f"    pipeline, the result's cache file, hand-offs (file - limit - start): "
          f"{m['file_cpu'] - m['limit_cpu'] - m['start_cpu'] * 1000 / count:.3f} ms")
    print(f"    the HTTP origin in osprey (http - file): {m['http_cpu'] - m['file_cpu']:.3f} ms, of which the downloader's "
          f"own receive {m['receive']:.3f} ms; nginx's CPU on the same cores {m['nginx_cpu']:.3f} ms")


if __name__ == "__main__":
    main()
