#!/usr/bin/env python3
"""CPU per answer of `osprey serve` builds (and thumbor) on scenario 9's misses, interleaved.

For a shared machine, where req/s swing with the other load: each participant's server process
CPU (utime + stime of all its threads, /proc/PID/stat) over a measured wrk run, divided by its
answers, with the participants' order alternating by repetition. Per-thread-name CPU per answer
is printed too (which thread runs the encode). Uses server_bench.py's origin, servers and wrk
script; the test images minus the animated GIFs (thumbor answers those as GIF).

  python3 Benchmarks/server/miss_cpu_ab.py --thumbor Benchmarks/.work/thumbor-venv/bin/thumbor \\
      --osprey "before=/path/osprey --workers 4" --osprey "after=/path/osprey --workers 4" \\
      --formats webp,jpeg --reps 3 --seconds 8
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_bench as sb  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def thread_cpu(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
            fields = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
            out[tid] = (name, (int(fields[11]) + int(fields[12])) / TICK)
        except OSError:
            pass
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--osprey", action="append", default=[], help="LABEL=BINARY [serve flags...] (repeatable)")
    p.add_argument("--thumbor", help="thumbor executable of the virtualenv (adds thumbor as a participant)")
    p.add_argument("--small", default=os.path.join(os.path.dirname(__file__), "../../Tests/Fixtures/images"))
    p.add_argument("--formats", default="webp,jpeg")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--seconds", type=int, default=8)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--connections", type=int, default=8)
    args = p.parse_args()

    small = os.path.abspath(args.small)
    files = [n for n in sorted(os.listdir(small)) if not n.startswith(".") and not n.endswith(".gif")]
    scratch = sb.scratchfs.up("/var/tmp", "osprey-miss-cpu.")
    origin = sb.Nginx(scratch, "origin", f"        location ~ ^/[^/]+/small/(.+)$ {{ alias {small}/$1; }}", workers=1, access_log=True)
    origin.wait(f"/probe/small/{files[0]}")
    config = argparse.Namespace(thumbor=args.thumbor, osprey=None, osprey_arg=[], wrk_threads=2,
                                connections=args.connections, warmup=args.warmup)
    bench = sb.Bench.__new__(sb.Bench)
    bench.args, bench.scratch, bench.cores, bench.origin, bench.runs, bench.notes = config, scratch, 2, origin, [], []
    participants = [tuple(x.split("=", 1)) for x in args.osprey] + ([("thumbor", None)] if args.thumbor else [])
    results = {}
    try:
        for rep in range(args.reps):
            order = participants if rep % 2 == 0 else participants[::-1]
            for fmt in args.formats.split(","):
                paths = [bench.image_url(fmt, "small", n, unique=True) for n in files]
                for label, command in order:
                    data = os.path.join(scratch, f"data-{rep}-{fmt}-{label}")
                    if command:
                        words = command.split()
                        config.osprey, config.osprey_arg = words[0], words[1:]
                        process, port, _ = bench.start_osprey(data)
                    else:
                        process, port, _ = bench.start_thumbor(data)
                    try:
                        bench.wrk(port, paths, "unique", f"w{rep}{fmt}{label}", args.warmup, True)
                        cpu0, threads0 = process_cpu(process.pid), thread_cpu(process.pid)
                        r = bench.wrk(port, paths, "unique", f"m{rep}{fmt}{label}", args.seconds, True)
                        cpu1, threads1 = process_cpu(process.pid), thread_cpu(process.pid)
                    finally:
                        sb.stop(process)
                    bad = r["non2xx"] + r["bad"] + r["timeouts"] + r["status_errors"]
                    per_answer = (cpu1 - cpu0) / r["requests"] * 1000
                    by_name = {}
                    for tid, (name, cpu) in threads1.items():
                        by_name[name] = by_name.get(name, 0) + cpu - threads0.get(tid, (name, 0))[1]
                    names = ", ".join(f"{k} {v / r['requests'] * 1000:.2f}" for k, v in sorted(by_name.items(), key=lambda x: -x[1]) if v > 0)
                    print(f"rep {rep} {fmt:4} {label:8} {r['rate']:7.1f} req/s  {per_answer:6.2f} ms CPU/answer  "
                          f"({r['requests']} answers, {bad} bad, load {os.getloadavg()[0]:.2f})  by thread: {names}", flush=True)
                    results.setdefault((fmt, label), []).append((r["rate"], per_answer))
    finally:
        origin.stop()
        sb.scratchfs.down(scratch)
    print("medians:")
    for (fmt, label), runs in sorted(results.items()):
        print(f"  {fmt:4} {label:8} {statistics.median(x[0] for x in runs):7.1f} req/s  "
              f"{statistics.median(x[1] for x in runs):6.2f} ms CPU/answer  (runs: {', '.join(f'{x[1]:.2f}' for x in runs)})")


if __name__ == "__main__":
    main()
