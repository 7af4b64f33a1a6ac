#!/usr/bin/env python3
"""Scenario 9's memory hits, A/B: several osprey binaries and nginx, interleaved round by round.

    python3 Benchmarks/server/hits_ab.py ROUNDS SECONDS LABEL=OSPREY_BINARY [LABEL=...] [--perf LABEL]

One loopback nginx origin serves the test images; each binary runs one `osprey serve` for all
rounds, warmed with every URL once (`fit-in/512x512/filters:quality(80):format(jpeg)`, as
server_bench.py), then each round runs wrk (-t2 -c8, 2 s uncounted warm-up) on each server in
turn, the order reversed every other round, and on nginx serving the first server's result bytes
as static files. Printed per run: rate, p50/p99, and the server's CPU time per request (utime +
stime from /proc over the run: steadier than the rate on a shared machine); at the end the
median [min..max] of each and of the ratio to nginx in the same round. `--perf LABEL` records
that server under `perf record -g -F 999 -e cpu-clock` to /tmp/hits-perf-LABEL.data.
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import server_bench as sb  # noqa: E402


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("rounds", type=int)
    p.add_argument("seconds", type=int)
    p.add_argument("binaries", nargs="+", help="LABEL=path of an osprey binary")
    p.add_argument("--small", default=os.path.join(os.path.dirname(__file__), "../../Tests/Fixtures/images"))
    p.add_argument("--perf", default=None)
    a = p.parse_args()
    args = argparse.Namespace(osprey=None, osprey_arg=[], warmup=2, wrk_threads=2, connections=8, cores=os.cpu_count(), scratch=None)
    bench = sb.Bench(args)
    small = os.path.abspath(a.small)
    bench.origin = sb.Nginx(bench.scratch, "origin", f"        location ~ ^/[^/]+/small/(.+)$ {{ alias {small}/$1; }}", workers=1)
    names = [n for n in sorted(os.listdir(small)) if n.rsplit(".", 1)[-1] in ("jpg", "png", "webp")]
    paths = [bench.image_url("jpeg", "small", n, unique=False) for n in names]
    bench.origin.wait(f"/probe/small/{names[0]}")
    static = os.path.join(bench.scratch, "static")
    os.makedirs(static)
    static_paths, servers, results = [], {}, {}
    nginx = None
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
            labels = list(servers) if r % 2 == 0 else list(reversed(servers))
            for label in labels:
                process, port, good = servers[label]
                perf = None
                if a.perf == label:
                    perf = subprocess.Popen(["perf", "record", "-g", "-F", "999", "-e", "cpu-clock", "-o", f"/tmp/hits-perf-{label}.data",
                                             "-p", str(process.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                before = cpu_seconds(process.pid)
                res = bench.wrk(port, good, "fixed", f"{label}{r}", a.seconds, False)
                res["cpu_us"] = (cpu_seconds(process.pid) - before) / res["requests"] * 1e6
                if perf:
                    perf.send_signal(2)
                    perf.wait()
                results.setdefault(label, []).append(res)
                print(f"round {r} {label:8} {res['rate']:9.0f} req/s  p50 {res['p50_us']/1000:.2f} ms  p99 {res['p99_us']/1000:.2f} ms  "
                      f"cpu/request {res['cpu_us']:.1f} us  non-2xx {res['non2xx']}  load {os.getloadavg()[0]:.2f}", flush=True)
            res = bench.wrk(nginx.port, static_paths, "fixed", f"n{r}", a.seconds, False)
            results.setdefault("nginx", []).append(res)
            print(f"round {r} {'nginx':8} {res['rate']:9.0f} req/s  p50 {res['p50_us']/1000:.2f} ms  p99 {res['p99_us']/1000:.2f} ms", flush=True)
    finally:
        for process, _, _ in servers.values():
            sb.stop(process)
        if nginx:
            nginx.stop()
        bench.origin.stop()
    for label, runs in results.items():
        rates = [x["rate"] for x in runs]
        line = f"{label:8} {statistics.median(rates):8.0f} req/s [{min(rates):.0f}..{max(rates):.0f}]"
        if label != "nginx":
            cpus = [x["cpu_us"] for x in runs]
            ratios = [x["rate"] / n["rate"] for x, n in zip(runs, results["nginx"])]
            line += (f"  cpu/request {statistics.median(cpus):.1f} us [{min(cpus):.1f}..{max(cpus):.1f}]"
                     f"  vs nginx {statistics.median(ratios):.2f}x [{min(ratios):.2f}..{max(ratios):.2f}]")
        print(line)
    if len(servers) == 2:
        first, second = list(servers)
        ratios = [y["rate"] / x["rate"] for x, y in zip(results[first], results[second])]
        print(f"{second} / {first}, same round: {statistics.median(ratios):.2f}x [{min(ratios):.2f}..{max(ratios):.2f}]")


if __name__ == "__main__":
    main()
