"""The soak: mixed load on `osprey serve` while the origin misbehaves, then a saturation phase, an
idle check, a kill -9 with damaged cache files, a restart and a scan of every result served.

Environment: SOAK_MIX (weights, e.g. "hit=30,miss=18,mut=12"; see load.py), OSPREY_BIN (the CLI, default .build/release/osprey), SOAK_SECONDS (load, default 600),
SOAK_CLIENTS (8), SOAK_WORKERS (4), SOAK_QUEUE (16), SOAK_DISK_MB (32, each for originals and
results), SOAK_MEMORY_MB (64), SOAK_DOWNLOAD_TIMEOUT (4), SOAK_REQUEST_TIMEOUT (12), SOAK_OUT (the
results' path prefix), SOAK_IMAGES (the test images), SOAK_IDLE_WAIT (longest wait for idle, 120 s). Writes OUT.json, OUT.txt and OUT.png.
"""
import collections
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

import load
import sampler

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
E = os.environ.get
BIN = E("OSPREY_BIN", os.path.join(ROOT, ".build/release/osprey"))
SECONDS = float(E("SOAK_SECONDS", "600"))
CLIENTS = int(E("SOAK_CLIENTS", "8"))
WORKERS = int(E("SOAK_WORKERS", "4"))
QUEUE = int(E("SOAK_QUEUE", "16"))
DISK_MB = int(E("SOAK_DISK_MB", "32"))
MEMORY_MB = int(E("SOAK_MEMORY_MB", "64"))
DOWNLOAD_TIMEOUT = float(E("SOAK_DOWNLOAD_TIMEOUT", "4"))
REQUEST_TIMEOUT = float(E("SOAK_REQUEST_TIMEOUT", "12"))
IMAGES = E("SOAK_IMAGES", "/work/shared/testdata/images")
IDLE_WAIT = float(E("SOAK_IDLE_WAIT", "120"))
WORK = os.path.join(ROOT, "Benchmarks/.work/soak")
OUT = E("SOAK_OUT", os.path.join(ROOT, "Benchmarks/results", time.strftime("soak-%H%M", time.gmtime())))
SLACK = 2.0  # seconds over the request deadline still counted as on time (scheduling on a loaded machine)


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, flush=True)


def start_origin():
    proc = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(__file__), "origin.py"), IMAGES,
                             os.path.join(WORK, "assets"), "0"], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    return proc, int(line.rsplit(" ", 1)[1])


def start_server(cache):
    args = [BIN, "serve", "--port", "0", "--thumbor-key", load.THUMBOR_KEY, "--imgproxy-key", load.IMGPROXY_KEY.hex(),
            "--imgproxy-salt", load.IMGPROXY_SALT.hex(), "--allow-loopback-sources", "--cache-dir", cache,
            "--disk-cache-mb", str(DISK_MB), "--memory-cache-mb", str(MEMORY_MB), "--workers", str(WORKERS),
            "--queue", str(QUEUE), "--download-timeout", str(DOWNLOAD_TIMEOUT), "--request-timeout", str(REQUEST_TIMEOUT)]
    logfile = open(os.path.join(WORK, "server.log"), "a")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=logfile, text=True)
    line = proc.stdout.readline()
    if "listening on" not in line:
        raise SystemExit(f"soak: the server did not start: {line!r}")
    threading.Thread(target=lambda: shutil.copyfileobj(proc.stdout, logfile), daemon=True).start()
    return proc, int(line.strip().rsplit(":", 1)[1]), args


class Results:
    """Every answer, aggregated: counts by kind and verdict, failures, latencies, results to rescan."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_kind = collections.defaultdict(collections.Counter)
        self.by_label = collections.defaultdict(collections.Counter)
        self.failures = []
        self.failure_count = 0
        self.latency = collections.defaultdict(float)
        self.late = []
        self.good = {}
        self.notable = []
        self.total = 0

    def add(self, kind, label, url, status, ok, verdict, seconds, body):
        with self.lock:
            self.total += 1
            key = verdict if status != 200 or not ok else "200 image"
            self.by_kind[kind][key if not ok else str(status)] += 1
            self.by_label[label][str(status) if ok else "FAIL " + verdict[:60]] += 1
            self.latency[kind] = max(self.latency[kind], seconds)
            if seconds > REQUEST_TIMEOUT + SLACK:
                self.late.append((kind, url, status, round(seconds, 2)))
            if ok and kind == "mut" and status and status >= 500 and len(self.notable) < 50:
                # A mutated image is no origin fault: a 5xx for one is worth reading.
                self.notable.append({"url": url, "status": status, "reason": body.decode(errors="replace").strip()[:200]})
            if not ok:
                self.failure_count += 1
                if len(self.failures) < 300:
                    self.failures.append({"kind": kind, "url": url, "status": status, "verdict": verdict, "seconds": round(seconds, 2)})
            elif status == 200 and kind in ("hit", "miss", "mut") and len(self.good) < 4000:
                self.good[url] = hashlib.sha256(body).hexdigest()


def client(port, mix, results, until, stop):
    while time.monotonic() < until and not stop.is_set():
        kind, label, url, box = mix.draw()
        status, headers, body, seconds = load.fetch("127.0.0.1", port, url, REQUEST_TIMEOUT + 20)
        ok, verdict = load.judge(kind, status, headers, body, box)
        results.add(kind, label, url, status, ok, verdict, seconds, body)


def disconnector(port, mix, until, stop, counts):
    rng = random.Random(99)
    while time.monotonic() < until and not stop.is_set():
        _, _, url, _ = mix.draw()
        counts[load.disconnect("127.0.0.1", port, url, rng)] += 1
        time.sleep(rng.random() * 0.6)


def saturate(port, smp):
    """More slow misses at once than workers + queue: some get 429, /health should say so."""
    n = WORKERS + QUEUE + 12
    statuses = collections.Counter()
    health = collections.Counter()
    done = threading.Event()

    def one(i):
        url = load.thumbor_url(f"fit-in/{300 + i}x{77 + int(time.time()) % 500}/http://127.0.0.1:{ORIGIN_PORT}/slow/2.5/hopper.jpg")
        status, _, body, _ = load.fetch("127.0.0.1", port, url, REQUEST_TIMEOUT + 20)
        statuses[status] += 1

    def poll():
        while not done.is_set():
            status, _ = sampler.get(port, "/health", timeout=3)
            health[status] += 1
            time.sleep(0.2)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    time.sleep(1)
    done.set()
    poller.join()
    after, reason = sampler.get(port, "/health")
    return {"requests": n, "statuses": dict(statuses), "health_during": dict(health), "health_after": after,
            "health_after_reason": reason.strip()}


def wait_idle(port, pid, baseline_fds):
    """Waits for in-flight and queued to reach 0 and the fds their baseline (connection pools time out)."""
    start = time.monotonic()
    snap = {}
    while time.monotonic() - start < IDLE_WAIT:
        _, text = sampler.get(port, "/metrics")
        snap = {"in_flight": sampler.gauge(text, "osprey_in_flight_requests"), "queued": sampler.gauge(text, "osprey_queued_requests"),
                "fds": sampler.open_fds(pid), "rss_mb": round(sampler.proc_status(pid)[0], 1),
                "waited_s": round(time.monotonic() - start, 1)}
        if snap["in_flight"] == 0 and snap["queued"] == 0 and snap["fds"] <= baseline_fds:
            break
        time.sleep(2)
    return snap


def cache_size(cache):
    sizes = {}
    for sub in sorted(os.listdir(cache)):
        total = 0
        for dirpath, _, files in os.walk(os.path.join(cache, sub)):
            total += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files if os.path.exists(os.path.join(dirpath, f)))
        sizes[sub] = total
    return sizes


def damage(cache, rng):
    """After the kill: truncate or overwrite in place a few entry files (a torn disk)."""
    files = [os.path.join(d, f) for d, _, fs in os.walk(cache) for f in fs if not f.startswith(".")]
    victims = rng.sample(files, max(1, len(files) // 30)) if files else []
    for i, path in enumerate(victims):
        size = os.path.getsize(path)
        if i % 2 == 0:
            os.truncate(path, size // 2)
        else:
            with open(path, "r+b") as f:
                f.seek(size // 3)
                f.write(b"\0" * 16)
    return len(files), len(victims)


def scan(port, good):
    """Every result served during the soak, asked again after the restart: each a whole image."""
    counts = collections.Counter()
    bad = []
    for url, digest in good.items():
        status, headers, body, _ = load.fetch("127.0.0.1", port, url, REQUEST_TIMEOUT + 20)
        ok, verdict = load.judge("scan", status, headers, body, None)
        if not ok or status != 200:
            counts["bad"] += 1
            if len(bad) < 20:
                bad.append((url, status, verdict))
        else:
            counts["same bytes" if hashlib.sha256(body).hexdigest() == digest else "other bytes, valid"] += 1
    return dict(counts), bad


def rss_analysis(samples):
    load_samples = [s for s in samples if s["phase"] == "load"]
    if len(load_samples) < 10:
        return {}
    t0 = load_samples[0]["t"]
    half = t0 + (load_samples[-1]["t"] - t0) / 2
    first = [s["rss_mb"] for s in load_samples if s["t"] < half]
    second = [s for s in load_samples if s["t"] >= half]
    last5 = [s for s in load_samples if s["t"] >= load_samples[-1]["t"] - 300] or second
    xs, ys = [s["t"] / 60 for s in last5], [s["rss_mb"] for s in last5]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / max(1e-9, sum((x - mx) ** 2 for x in xs))
    return {"machine_load1_mean": round(sum(s["load1"] for s in load_samples) / len(load_samples), 1),
            "server_cpu_s": round(load_samples[-1]["cpu_s"] - load_samples[0]["cpu_s"], 1),
            "peak_mb": max(s["rss_mb"] for s in load_samples), "peak_first_half_mb": max(first),
            "peak_second_half_mb": max(s["rss_mb"] for s in second), "mean_last5_mb": round(my, 1),
            "slope_last5_mb_per_min": round(slope, 2), "window_last5_s": round(last5[-1]["t"] - last5[0]["t"])}


ORIGIN_PORT = 0


def main():
    global ORIGIN_PORT
    os.makedirs(WORK, exist_ok=True)
    cache = os.path.join(WORK, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    open(os.path.join(WORK, "server.log"), "w").close()
    origin, ORIGIN_PORT = start_origin()
    server, port, args = start_server(cache)
    log(f"soak: origin :{ORIGIN_PORT}, server :{port} pid {server.pid}, {SECONDS:.0f} s of load, {CLIENTS} clients")
    report = {"binary": BIN, "args": args[1:], "seconds": SECONDS, "clients": CLIENTS, "mix": load.MIX, "faults": load.FAULTS}
    # Warm-up (opens the caches and the origin connection pool), so the baseline is a served server's.
    for name in load.SMALL:
        load.fetch("127.0.0.1", port, load.Mix(f"127.0.0.1:{ORIGIN_PORT}").url("t", f"img/{name}", 50, 50), 30)
    smp = sampler.Sampler(server.pid, port)
    smp.start()
    time.sleep(5)
    baseline = smp.samples[-1]
    report["baseline"] = baseline

    mix = load.Mix(f"127.0.0.1:{ORIGIN_PORT}")
    results = Results()
    stop = threading.Event()
    drops = collections.Counter()
    smp.phase = "load"
    until = time.monotonic() + SECONDS
    threads = [threading.Thread(target=client, args=(port, mix, results, until, stop)) for _ in range(CLIENTS)]
    threads.append(threading.Thread(target=disconnector, args=(port, mix, until, stop, drops)))
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        time.sleep(15)
        if server.poll() is not None:
            log(f"soak: THE SERVER EXITED with {server.returncode}")
            stop.set()
        s = smp.samples[-1]
        log(f"  {results.total} answers, {results.failure_count} wrong; rss {s['rss_mb']} MiB, fds {s['fds']}, in flight {s['in_flight']}, health {s['health']}")
    report["crashed"] = server.poll() is not None
    report["disconnects"] = {["mid-request-line", "after-request", "mid-body"][k]: v for k, v in drops.items()}

    if not report["crashed"]:
        smp.phase = "saturate"
        log("soak: saturation phase")
        report["saturation"] = saturate(port, smp)
        smp.phase = "idle"
        log("soak: waiting for idle")
        report["idle"] = wait_idle(port, server.pid, baseline["fds"])
        report["health_idle"] = sampler.get(port, "/health")[0]
    smp.stop()
    report["cache_bytes"] = cache_size(cache)
    report["cache_limit_bytes_each"] = DISK_MB << 20

    # A crash mid-write (kill -9 under load), damaged files, a restart, then every result again.
    if not report["crashed"]:
        burst = [threading.Thread(target=client, args=(port, mix, Results(), time.monotonic() + 3, threading.Event())) for _ in range(4)]
        for t in burst:
            t.start()
        time.sleep(1.5)
        server.send_signal(signal.SIGKILL)
        server.wait()
        for t in burst:
            t.join()
        report["damaged"] = damage(cache, random.Random(5))
        server, port, _ = start_server(cache)
        log(f"soak: restarted (pid {server.pid}); scanning {len(results.good)} results")
        report["scan"], report["scan_bad"] = scan(port, results.good)
        _, text = sampler.get(port, "/metrics")
        report["scan_cache_levels"] = sampler.counters(text, "osprey_cache_hits_total")
        server.send_signal(signal.SIGTERM)
        try:
            report["exit_after_sigterm"] = server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            report["exit_after_sigterm"] = "did not exit in 30 s"
    origin.terminate()

    report["answers"] = results.total
    report["by_kind"] = {k: dict(v) for k, v in results.by_kind.items()}
    report["by_label"] = {k: dict(v) for k, v in sorted(results.by_label.items())}
    report["failures"] = results.failures
    report["failure_count"] = results.failure_count
    report["mutated_5xx"] = results.notable
    report["late"] = results.late[:50]
    report["late_count"] = len(results.late)
    report["max_latency_s"] = {k: round(v, 2) for k, v in results.latency.items()}
    report["rss"] = rss_analysis(smp.samples)
    report["samples"] = smp.samples
    judge(report)
    with open(OUT + ".json", "w") as f:
        json.dump(report, f, indent=1, default=str)
    # Both memory caches (results and decoded originals) full, over the idle baseline.
    limits = {f"baseline + 2 x {MEMORY_MB} MiB memory caches": report["baseline"]["rss_mb"] + 2 * MEMORY_MB}
    sampler.plot(smp.samples, OUT + ".png", f"osprey serve soak: {SECONDS:.0f} s mixed load + faults, "
                 f"--workers {WORKERS} --queue {QUEUE} ({os.path.basename(BIN)})", limits)
    with open(OUT + ".txt", "w") as f:
        f.write(summary(report))
    print(summary(report))
    return 0 if all(report["verdict"].values()) else 1


def judge(r):
    rss, sat, idle = r.get("rss", {}), r.get("saturation", {}), r.get("idle", {})
    total_limit = 2 * r["cache_limit_bytes_each"]
    r["verdict"] = {
        "no crash": not r["crashed"],
        "every answer a correct image or a 4xx/5xx with a reason": r["failure_count"] == 0,
        "none past the deadline + slack": r["late_count"] == 0,
        "RSS levels off (2nd-half peak <= 1.1 x 1st-half peak, or last-5-min slope < 1 MiB/min)":
            bool(rss) and (rss["peak_second_half_mb"] <= 1.1 * rss["peak_first_half_mb"] or rss["slope_last5_mb_per_min"] < 1),
        "in flight and queued back to 0, fds back to baseline": idle.get("in_flight") == 0 and idle.get("queued") == 0
            and idle.get("fds", 1 << 30) <= r["baseline"]["fds"],
        "disk cache within its limit": sum(r["cache_bytes"].values()) <= total_limit,
        "/health unhealthy while saturated, healthy after": any(k != "200" and k != 200 for k in sat.get("health_during", {}))
            and sat.get("health_after") == 200 and r.get("health_idle") == 200,
        "no torn entry served after kill -9 + damaged files": r.get("scan", {}).get("bad", 0) == 0 and bool(r.get("scan")),
    }


def summary(r):
    lines = [f"osprey serve soak ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}): {r['seconds']:.0f} s, {r['clients']} clients + 1 disconnecting",
             "command: " + " ".join(r["args"]), f"answers: {r['answers']}, wrong: {r['failure_count']}, late: {r['late_count']}",
             f"disconnects: {r['disconnects']}", "", "by kind (status: count):"]
    for kind, counts in r["by_kind"].items():
        lines.append(f"  {kind:7} " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])))
    lines += ["", "by fault (status: count):"]
    for label, counts in r["by_label"].items():
        lines.append(f"  {label:17} " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])))
    lines += ["", f"max latency (s): {r['max_latency_s']}", f"RSS: {r['rss']}", f"baseline: rss {r['baseline']['rss_mb']} MiB, fds {r['baseline']['fds']}",
              f"saturation: {r.get('saturation')}", f"idle after: {r.get('idle')}, /health {r.get('health_idle')}",
              f"disk cache bytes: {r['cache_bytes']} (limit {r['cache_limit_bytes_each']} each)",
              f"kill -9 then damaged (files, damaged): {r.get('damaged')}; rescan after restart: {r.get('scan')}; bad: {r.get('scan_bad')}",
              f"scan cache levels: {r.get('scan_cache_levels')}", f"exit after SIGTERM: {r.get('exit_after_sigterm')}", "", "verdict:"]
    lines += [f"  {'PASS' if ok else 'FAIL'}  {name}" for name, ok in r["verdict"].items()]
    if r.get("mutated_5xx"):
        lines += ["", "5xx for mutated images:"] + [f"  {m['status']} {m['reason']} {m['url'][-60:]}" for m in r["mutated_5xx"][:20]]
    if r["failures"]:
        lines += ["", "first wrong answers:"] + [f"  {f['kind']} {f['status']} {f['verdict']} {f['url'][:140]}" for f in r["failures"][:25]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
