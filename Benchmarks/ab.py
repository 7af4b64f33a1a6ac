#!/usr/bin/env python3
"""The one driver for interleaved A/B comparisons: two or more builds (or a build and a peer) run
round after round on one machine, the order rotating every round, each figure reported per side
and as the per-round ratio to the first side (median [min..max]), so that machine drift cancels.

  python3 Benchmarks/ab.py harness REV [--rounds 6] [SCENARIO...]
      OspreyBench scenarios (default 1 2) of this tree (B) against commit REV (A, built in a
      worktree under Benchmarks/.work/ab-REV), release builds, BENCH_REPS (3) each; the median
      over rounds of each side's median and of B/A, with a 95% bootstrap interval. --a BIN / --b BIN
      run prebuilt binaries instead (B = a copy of A is an A/A run: the noise floor); --harness
      FILE... copies this tree's harness files into REV's worktree before building A. Scenario 2's
      S2_* settings pass through the environment.
  python3 Benchmarks/ab.py cli NAME=BIN NAME=BIN... [--rounds 8] [--set small|large] [--urls N]
      whole `osprey prefetch` processes (scenario 8's job) from an nginx origin: rate and CPU per
      image (wait4).
  python3 Benchmarks/ab.py hits NAME=BIN... [--rounds 5] [--seconds 10] [--perf NAME]
      scenario 9's memory hits under wrk, each `osprey serve` against nginx serving the same bytes:
      rate, p50/p99, the server's CPU per request.
  python3 Benchmarks/ab.py miss-cpu [--osprey "NAME=BIN [serve flags]"]... [--thumbor THUMBOR]
      scenario 9's misses (a new URL per request): each participant's CPU per answer, by thread.

Environment: OSPREY_TESTDATA (default Tests/Fixtures/images). The photos for `cli --set large`
come from Benchmarks/run.sh (Benchmarks/.work/large).
"""
import argparse
import glob
import json
import os
import random
import shutil
import statistics as st
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks", "server"))
import server_bench as sb  # noqa: E402

SMALL = os.path.abspath(os.environ.get("OSPREY_TESTDATA") or os.path.join(ROOT, "Tests", "Fixtures", "images"))
LARGE = os.path.join(ROOT, "Benchmarks", ".work", "large")
TICK = os.sysconf("SC_CLK_TCK")


def rotated(sides, round_index):
    """The sides in this round's order: rotated by one every round."""
    k = round_index % len(sides)
    return sides[k:] + sides[:k]


def spread(values, fmt="{:.3f}"):
    """median [min..max]"""
    return f"{fmt.format(st.median(values))} [{fmt.format(min(values))}..{fmt.format(max(values))}]"


def process_cpu(pid, task=None):
    path = f"/proc/{pid}/task/{task}/stat" if task else f"/proc/{pid}/stat"
    fields = open(path).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def thread_cpu(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            out[tid] = (open(f"/proc/{pid}/task/{tid}/comm").read().strip(), process_cpu(pid, tid))
        except OSError:
            pass
    return out


def bootstrap(ratios):
    """95% bootstrap interval of the median ratio."""
    rng = random.Random(1)
    boots = sorted(st.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    return boots[int(0.025 * len(boots))], boots[int(0.975 * len(boots)) - 1]


# MARK: harness scenarios of two commits

def harness(a):
    work = os.path.join(ROOT, "Benchmarks", ".work")
    base = a.base_dir or os.path.join(work, f"ab-{a.rev}")
    out = a.out or os.path.join(work, "ab-out")
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, "*.json")):
        os.remove(old)
    if not a.a and not os.path.isdir(base):
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", base, a.rev], check=True, stdout=subprocess.DEVNULL)
        if os.path.exists(os.path.join(ROOT, "Package.resolved")):
            shutil.copy(os.path.join(ROOT, "Package.resolved"), base)
    if not a.a:
        for name in a.harness:
            shutil.copy(os.path.join(ROOT, name), os.path.join(base, name))
    build = ["swift", "build", "-c", "release", "--product", "OspreyBench"]
    if not a.b:
        subprocess.run(build, cwd=os.path.join(ROOT, "Benchmarks"), check=True, stdout=subprocess.DEVNULL)
    if not a.a:
        subprocess.run(build, cwd=os.path.join(base, "Benchmarks"), check=True, stdout=subprocess.DEVNULL)
    sides = [("A", a.a or os.path.join(base, "Benchmarks/.build/release/OspreyBench")),
             ("B", a.b or os.path.join(ROOT, "Benchmarks/.build/release/OspreyBench"))]
    scratch = tempfile.mkdtemp(prefix="osprey-ab.", dir="/var/tmp")
    try:
        for r in range(a.rounds):
            for s in a.scenarios or ["1", "2"]:
                for side, binary in (sides if r % 2 == 0 else sides[::-1]):
                    env = dict(os.environ, VIPS_CONCURRENCY="1", BENCH_REPS=os.environ.get("BENCH_REPS", "3"),
                               OSPREY_BENCH_TMP=scratch, BENCH_JSON=os.path.join(out, f"{side}-s{s}-r{r}.json"),
                               OSPREY_TESTDATA=SMALL)
                    subprocess.run([binary, s], env=env, check=True, stdout=subprocess.DEVNULL)
            print(f"ab.py: round {r + 1} of {a.rounds} done", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    runs = {}
    for path in glob.glob(os.path.join(out, "*.json")):
        side, s, r = os.path.basename(path)[:-5].split("-")
        figures = json.load(open(path))["figures"]
        runs.setdefault((s, r), {})[side] = {(f["name"], f.get("baseline")): (f["median"], f["unit"]) for f in figures}
    rows = {}
    for (s, r), both in sorted(runs.items()):
        if set(both) != {"A", "B"}:
            continue
        for key, (b, unit) in both["B"].items():
            if key in both["A"]:
                av = both["A"][key][0]
                row = rows.setdefault((s, key), ([], [], [], unit))
                row[0].append(av), row[1].append(b), row[2].append(b / av if av else float("nan"))
    print(f"| scenario | figure | A ({a.rev}) median | B median | unit | B/A median [min..max] | 95% interval | rounds |")
    print("|---|---|---|---|---|---|---|---|")
    for (s, (name, _)), (av, bv, ratio, unit) in sorted(rows.items(), key=lambda i: (i[0][0], i[0][1][0], i[0][1][1] or "")):
        lo, hi = bootstrap(ratio)
        print(f"| {s[1:]} | {name} | {st.median(av):.4g} | {st.median(bv):.4g} | {unit} | {spread(ratio)} | {lo:.3f}..{hi:.3f} | {len(ratio)} |")


# MARK: whole CLI processes

def cli(a):
    sides = [b.split("=", 1) for b in a.binaries]
    count = a.urls or (420 if a.set == "small" else 96)
    directory = SMALL if a.set == "small" else LARGE
    suffixes = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif")
    names = sorted(n for n in os.listdir(directory) if n.lower().endswith(suffixes) and not n.startswith("."))
    scratch = sb.scratchfs.up("/var/tmp", "osprey-cli-ab.")
    nginx = sb.Nginx(scratch, "nginx", f"        location /small/ {{ alias {SMALL}/; }}\n        location /large/ {{ alias {LARGE}/; }}")
    results = {name: [] for name, _ in sides}
    spec = "thumbnail:256,format:jpeg:80"
    try:
        nginx.wait(f"/{a.set}/{names[0]}")
        for r in range(a.rounds):
            for name, binary in rotated(sides, r):
                cache = tempfile.mkdtemp(dir=scratch)
                listing = os.path.join(cache, "urls.txt")
                with open(listing, "w") as f:
                    f.write("".join(f"http://127.0.0.1:{nginx.port}/{a.set}/{names[i % len(names)]}?r={name}-{r}-{i}\n" for i in range(count)))
                start = time.monotonic()
                child = subprocess.Popen([binary, "prefetch", "--input", listing, "--concurrency", "4", "--process", spec,
                                          "--cache-dir", os.path.join(cache, "c")], stdout=subprocess.DEVNULL)
                _, status, usage = os.wait4(child.pid, 0)
                seconds = time.monotonic() - start
                if status != 0:
                    sys.exit(f"ab.py: {binary} exited with status {status}")
                results[name].append((count / seconds, (usage.ru_utime + usage.ru_stime) / count * 1000))
            print(f"round {r + 1}: " + "  ".join(f"{n} {results[n][-1][0]:.1f}/s {results[n][-1][1]:.2f} ms" for n, _ in sides), flush=True)
    finally:
        nginx.stop()
        sb.scratchfs.down(scratch)
    first = sides[0][0]
    print(f"\n{a.set}: {count} URLs, {a.rounds} rounds, spec {spec}")
    for name, _ in sides:
        line = f"{name}: {st.median(r for r, _ in results[name]):.1f} img/s, CPU {st.median(c for _, c in results[name]):.2f} ms/img"
        if name != first:
            line += f", {spread([x[0] / y[0] for x, y in zip(results[name], results[first])])}x {first}"
            line += f", CPU {spread([x[1] / y[1] for x, y in zip(results[name], results[first])])}x"
        print(line)


# MARK: server memory hits against nginx static

def hits(a):
    args = argparse.Namespace(osprey=None, osprey_arg=[], warmup=2, wrk_threads=2, connections=8, cores=os.cpu_count(), scratch=None)
    bench = sb.Bench(args)
    bench.origin = sb.Nginx(bench.scratch, "origin", f"        location ~ ^/[^/]+/small/(.+)$ {{ alias {SMALL}/$1; }}", workers=1)
    names = [n for n in sorted(os.listdir(SMALL)) if n.rsplit(".", 1)[-1] in ("jpg", "png", "webp")]
    paths = [bench.image_url("jpeg", "small", n, unique=False) for n in names]
    bench.origin.wait(f"/probe/small/{names[0]}")
    static = os.path.join(bench.scratch, "static")
    os.makedirs(static)
    static_paths, servers, results, nginx = [], {}, {}, None
    try:
        for label, binary in (b.split("=", 1) for b in a.binaries):
            args.osprey = binary
            process, port, _ = bench.start_osprey(os.path.join(bench.scratch, "cache-" + label))
            good = []
            for path, name in zip(paths, names):
                status, _, body = sb.http_get(f"http://127.0.0.1:{port}{path}")
                if status != 200:
                    continue
                good.append(path)
                if not servers:
                    with open(os.path.join(static, name + ".jpg"), "wb") as f:
                        f.write(body)
                    static_paths.append(f"/s/{name}.jpg")
            servers[label] = (process, port, good)
        nginx = sb.Nginx(bench.scratch, "static", f"        location /s/ {{ alias {static}/; }}", workers=os.cpu_count())
        nginx.wait(static_paths[0])
        for r in range(a.rounds):
            for label in rotated(list(servers), r):
                process, port, good = servers[label]
                perf = None
                if a.perf == label:
                    perf = subprocess.Popen(["perf", "record", "-g", "-F", "999", "-e", "cpu-clock", "-o", f"/tmp/hits-perf-{label}.data",
                                             "-p", str(process.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                before = process_cpu(process.pid)
                res = bench.wrk(port, good, "fixed", f"{label}{r}", a.seconds, False)
                res["cpu_us"] = (process_cpu(process.pid) - before) / res["requests"] * 1e6
                if perf:
                    perf.send_signal(2)
                    perf.wait()
                results.setdefault(label, []).append(res)
                print(f"round {r} {label:8} {res['rate']:9.0f} req/s  p50 {res['p50_us'] / 1000:.2f} ms  p99 {res['p99_us'] / 1000:.2f} ms  "
                      f"cpu/request {res['cpu_us']:.1f} us  non-2xx {res['non2xx']}  load {os.getloadavg()[0]:.2f}", flush=True)
            res = bench.wrk(nginx.port, static_paths, "fixed", f"n{r}", a.seconds, False)
            results.setdefault("nginx", []).append(res)
            print(f"round {r} {'nginx':8} {res['rate']:9.0f} req/s  p50 {res['p50_us'] / 1000:.2f} ms  p99 {res['p99_us'] / 1000:.2f} ms", flush=True)
    finally:
        for process, _, _ in servers.values():
            sb.stop(process)
        if nginx:
            nginx.stop()
        bench.origin.stop()
    for label, runs in results.items():
        line = f"{label:8} {spread([x['rate'] for x in runs], '{:.0f}')} req/s"
        if label != "nginx":
            line += (f"  cpu/request {spread([x['cpu_us'] for x in runs], '{:.1f}')} us"
                     f"  vs nginx {spread([x['rate'] / n['rate'] for x, n in zip(runs, results['nginx'])], '{:.2f}')}x")
        print(line)
    labels = list(servers)
    for label in labels[1:]:
        print(f"{label} / {labels[0]}, same round: {spread([y['rate'] / x['rate'] for x, y in zip(results[labels[0]], results[label])], '{:.2f}')}x")


# MARK: server misses, CPU per answer

def miss_cpu(a):
    files = [n for n in sorted(os.listdir(SMALL)) if not n.startswith(".") and not n.endswith(".gif")]
    scratch = sb.scratchfs.up("/var/tmp", "osprey-miss-cpu.")
    origin = sb.Nginx(scratch, "origin", f"        location ~ ^/[^/]+/small/(.+)$ {{ alias {SMALL}/$1; }}", workers=1, access_log=True)
    origin.wait(f"/probe/small/{files[0]}")
    config = argparse.Namespace(thumbor=a.thumbor, osprey=None, osprey_arg=[], wrk_threads=2, connections=a.connections, warmup=a.warmup)
    bench = sb.Bench.__new__(sb.Bench)
    bench.args, bench.scratch, bench.cores, bench.origin, bench.runs, bench.notes = config, scratch, 2, origin, [], []
    participants = [tuple(x.split("=", 1)) for x in a.osprey] + ([("thumbor", None)] if a.thumbor else [])
    results = {}
    try:
        for rep in range(a.reps):
            for fmt in a.formats.split(","):
                paths = [bench.image_url(fmt, "small", n, unique=True) for n in files]
                for label, command in rotated(participants, rep):
                    data = os.path.join(scratch, f"data-{rep}-{fmt}-{label}")
                    if command:
                        words = command.split()
                        config.osprey, config.osprey_arg = words[0], words[1:]
                        process, port, _ = bench.start_osprey(data)
                    else:
                        process, port, _ = bench.start_thumbor(data)
                    try:
                        bench.wrk(port, paths, "unique", f"w{rep}{fmt}{label}", a.warmup, True)
                        cpu0, threads0 = process_cpu(process.pid), thread_cpu(process.pid)
                        r = bench.wrk(port, paths, "unique", f"m{rep}{fmt}{label}", a.seconds, True)
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
        print(f"  {fmt:4} {label:8} {st.median(x[0] for x in runs):7.1f} req/s  {st.median(x[1] for x in runs):6.2f} ms CPU/answer"
              f"  (runs: {', '.join(f'{x[1]:.2f}' for x in runs)})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="mode", required=True)
    h = sub.add_parser("harness")
    h.add_argument("rev")
    h.add_argument("scenarios", nargs="*")
    h.add_argument("--rounds", type=int, default=6)
    h.add_argument("--a", help="prebuilt binary as A (REV only labels the table)")
    h.add_argument("--b", help="prebuilt binary as B")
    h.add_argument("--harness", nargs="*", default=[], help="harness files copied into REV's worktree")
    h.add_argument("--base-dir", help="an existing checkout of REV")
    h.add_argument("--out", help="JSON per run (default Benchmarks/.work/ab-out)")
    c = sub.add_parser("cli")
    c.add_argument("binaries", nargs="+", help="NAME=BINARY")
    c.add_argument("--rounds", type=int, default=8)
    c.add_argument("--set", choices=["small", "large"], default="small")
    c.add_argument("--urls", type=int, help="URLs per run (default 420 small, 96 large)")
    s = sub.add_parser("hits")
    s.add_argument("binaries", nargs="+", help="NAME=BINARY")
    s.add_argument("--rounds", type=int, default=5)
    s.add_argument("--seconds", type=int, default=10)
    s.add_argument("--perf", help="record this server under perf to /tmp/hits-perf-NAME.data")
    m = sub.add_parser("miss-cpu")
    m.add_argument("--osprey", action="append", default=[], help="NAME=BINARY [serve flags...] (repeatable)")
    m.add_argument("--thumbor", help="thumbor executable of the virtualenv (adds thumbor as a participant)")
    m.add_argument("--formats", default="webp,jpeg")
    m.add_argument("--reps", type=int, default=3)
    m.add_argument("--seconds", type=int, default=8)
    m.add_argument("--warmup", type=int, default=3)
    m.add_argument("--connections", type=int, default=8)
    a = p.parse_args()
    {"harness": harness, "cli": cli, "hits": hits, "miss-cpu": miss_cpu}[a.mode](a)


if __name__ == "__main__":
    main()
