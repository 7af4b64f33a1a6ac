"""The soak: mixed load on `osprey serve` while the origin misbehaves, then a saturation phase, an
idle check, a kill -9 with damaged cache files, a restart and a scan of every result served.

Environment: SOAK_MIX (weights, e.g. "hit=30,miss=18,mut=12"; see load.py), OSPREY_BIN (the CLI, default .build/release/osprey),
SOAK_ORIGIN_BIN (the origin, default .build/release/OspreyOrigin), SOAK_SECONDS (load, default 600),
SOAK_CLIENTS (8), SOAK_WORKERS (4), SOAK_QUEUE (16), SOAK_DISK_MB (32, each for originals and
results), SOAK_MEMORY_MB (64), SOAK_DOWNLOAD_TIMEOUT (4), SOAK_REQUEST_TIMEOUT (12), SOAK_MAX_SOURCE_BYTES
(52428800), SOAK_MAX_SOURCE_PIXELS (50000000) (the server's defaults, passed explicitly since the RSS
bound is computed from them), SOAK_FILL (fraction of the result memory cache to fill before the load,
0.95; 0 skips the fill), SOAK_FILL_MAX (longest fill, 900 s), SOAK_OUT (the results' path prefix),
SOAK_IMAGES (the test images), SOAK_IDLE_WAIT (longest wait for idle, 120 s). Writes OUT.json, OUT.txt and OUT.png.

RSS verdict (issue 17: "RSS levels off: peak bounded by configuration, not growing over the last 5
minutes"): before the load, unique misses fill the result memory cache to SOAK_FILL of its limit
(`osprey_memory_cache_bytes` in /metrics), so that the load starts with the caches at their
configured level. Then the peak RSS of the load must stay under the configured bound
    baseline + sum of the memory caches' limits + workers x (max source bytes + 8 B x max source pixels)
(baseline: the idle server after its first requests, caches empty; per worker: the source's bytes,
its decoded 8-bit RGBA pixels and one processed copy no larger than the source: the soak never asks
for a result larger than its source), and the least-squares slope of the last 5 minutes of the load
must be under 1 MiB/min.
"""
import bisect
import collections
import gzip
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
ORIGIN_BIN = E("SOAK_ORIGIN_BIN", os.path.join(ROOT, ".build/release/OspreyOrigin"))
SECONDS = float(E("SOAK_SECONDS", "600"))
CLIENTS = int(E("SOAK_CLIENTS", "8"))
WORKERS = int(E("SOAK_WORKERS", "4"))
QUEUE = int(E("SOAK_QUEUE", "16"))
DISK_MB = int(E("SOAK_DISK_MB", "32"))
MEMORY_MB = int(E("SOAK_MEMORY_MB", "64"))
DOWNLOAD_TIMEOUT = float(E("SOAK_DOWNLOAD_TIMEOUT", "4"))
REQUEST_TIMEOUT = float(E("SOAK_REQUEST_TIMEOUT", "12"))
IMAGES = E("SOAK_IMAGES", os.environ.get("OSPREY_TESTDATA") or os.path.join(ROOT, "Tests/Fixtures/images"))
IDLE_WAIT = float(E("SOAK_IDLE_WAIT", "120"))
MAX_SOURCE_BYTES = int(E("SOAK_MAX_SOURCE_BYTES", str(50 << 20)))
MAX_SOURCE_PIXELS = int(E("SOAK_MAX_SOURCE_PIXELS", "50000000"))
FILL = float(E("SOAK_FILL", "0.95"))
FILL_MAX = float(E("SOAK_FILL_MAX", "900"))
SLOPE_LIMIT = 1.0  # MiB/min over the last 5 minutes of the load
SPIKE_MB = 10.0  # a sample this far over the median of the 21 s around it is a transient spike
WORK = os.path.join(ROOT, "Benchmarks/.work/soak")
OUT = E("SOAK_OUT", os.path.join(ROOT, "Benchmarks/results", time.strftime("%Y-%m-%d-soak", time.gmtime())))
SLACK = 2.0  # seconds over the request deadline still counted as on time (scheduling on a loaded machine)


def log(*args):
    print(time.strftime("%H:%M:%S"), *args, flush=True)


def make_assets(work):
    """The bombs the origin serves by name, made once into WORK (the vips CLI streams them, so memory
    stays small): bomb-png.png and bomb-jpeg.jpg (20000x20000, 400 Mpx, a few hundred KB),
    bomb-png-in-limit.png (7000x7000, just under the default pixel limit), gzip-bomb.gz (1 GiB of zeros)."""
    os.makedirs(work, exist_ok=True)
    for name, size in (("bomb-png.png", "20000"), ("bomb-jpeg.jpg", "20000"), ("bomb-png-in-limit.png", "7000")):
        path = os.path.join(work, name)
        if not os.path.exists(path):
            tmp = os.path.join(work, "tmp-" + name)
            subprocess.run(["vips", "black", tmp, size, size], check=True)
            os.rename(tmp, path)
    path = os.path.join(work, "gzip-bomb.gz")
    if not os.path.exists(path):
        chunk = b"\0" * (1 << 20)
        with open(path + ".tmp", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as out:
            for _ in range(1024):
                out.write(chunk)
        os.rename(path + ".tmp", path)


def start_origin():
    """The misbehaving origin: the tests' loopback origin as a process (`OspreyOrigin`, release build,
    made here when missing; its fault routes are in Tests/OspreyTestSupport/LoopbackRoute+Faults.swift)
    serving the test images and the bombs by name. Returns (process, port)."""
    if not os.access(ORIGIN_BIN, os.X_OK):
        log("building the origin (swift build -c release --product OspreyOrigin)")
        subprocess.run(["swift", "build", "-c", "release", "--product", "OspreyOrigin"], cwd=ROOT, check=True)
    assets = os.path.join(WORK, "assets")
    make_assets(assets)
    proc = subprocess.Popen([ORIGIN_BIN, IMAGES, assets], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("listening "):
        raise SystemExit(f"soak: the origin did not start: {line!r}")
    return proc, int(line.split()[1])


def start_server(cache):
    args = [BIN, "serve", "--port", "0", "--thumbor-key", load.THUMBOR_KEY, "--imgproxy-key", load.IMGPROXY_KEY.hex(),
            "--imgproxy-salt", load.IMGPROXY_SALT.hex(), "--allow-loopback-sources", "--cache-dir", cache,
            "--disk-cache-mb", str(DISK_MB), "--memory-cache-mb", str(MEMORY_MB), "--workers", str(WORKERS),
            "--queue", str(QUEUE), "--download-timeout", str(DOWNLOAD_TIMEOUT), "--request-timeout", str(REQUEST_TIMEOUT),
            "--max-source-bytes", str(MAX_SOURCE_BYTES), "--max-source-pixels", str(MAX_SOURCE_PIXELS)]
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
        self.intervals = []  # (start, end, label) on the sampler's clock, for the spike analysis

    def add(self, kind, label, url, status, ok, verdict, seconds, body, ended=None):
        with self.lock:
            self.total += 1
            if ended is not None:
                self.intervals.append((round(ended - seconds, 2), round(ended, 2), label))
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


def client(port, mix, results, until, stop, t0=None):
    while time.monotonic() < until and not stop.is_set():
        kind, label, url, box = mix.draw()
        status, headers, body, seconds = load.fetch("127.0.0.1", port, url, REQUEST_TIMEOUT + 20)
        ok, verdict = load.judge(kind, status, headers, body, box)
        results.add(kind, label, url, status, ok, verdict, seconds, body, None if t0 is None else time.monotonic() - t0)


def memory_caches(port):
    """{cache: (bytes, limit)} from /metrics (osprey_memory_cache_bytes and _limit_bytes)."""
    _, text = sampler.get(port, "/metrics")
    held = sampler.counters(text, "osprey_memory_cache_bytes")
    limits = sampler.counters(text, "osprey_memory_cache_limit_bytes")
    return {k.split('"')[1]: (held.get(k, 0), v) for k, v in limits.items()}


def fill(port, mix):
    """Unique misses until the result memory cache holds FILL of its limit: the soak's own miss
    sizes and images, under source URLs of their own (`img/fill/NAME`), so that no load request is a hit."""
    start = time.monotonic()
    counter = [0]
    lock = threading.Lock()
    done = threading.Event()
    answers = collections.Counter()

    def one():
        while not done.is_set() and time.monotonic() - start < FILL_MAX:
            with lock:
                counter[0] += 1
                c = counter[0]
            w, h = 40 + c % 360, 40 + (c // 360) % 360
            url = mix.url("ti"[c % 2], f"img/fill/{load.IMAGES[(c // 2) % len(load.IMAGES)]}", w, h)
            status, _, _, _ = load.fetch("127.0.0.1", port, url, REQUEST_TIMEOUT + 20)
            with lock:
                answers[status] += 1

    threads = [threading.Thread(target=one, daemon=True) for _ in range(CLIENTS)]
    for t in threads:
        t.start()
    level = (0, 1)
    while time.monotonic() - start < FILL_MAX:
        time.sleep(2)
        level = memory_caches(port).get("results", (0, 1))
        if level[0] >= FILL * level[1]:
            break
    done.set()
    for t in threads:
        t.join()
    level = memory_caches(port).get("results", (0, 1))
    return {"seconds": round(time.monotonic() - start), "answers": dict(answers), "result_cache_bytes": level[0],
            "result_cache_limit": level[1], "filled": level[0] >= FILL * level[1]}


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
        url = load.thumbor_url(f"fit-in/{300 + i}x{77 + int(time.time()) % 500}/http://127.0.0.1:{ORIGIN_PORT}/delay/2500/hopper.jpg")
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


def rss_bound(baseline_mb, caches):
    """The RSS the configuration allows (MiB): see the module's docstring."""
    cache_mb = sum(limit for _, limit in caches.values()) / 2**20
    worker_mb = (MAX_SOURCE_BYTES + 8 * MAX_SOURCE_PIXELS) / 2**20
    return {"baseline_mb": baseline_mb, "memory_caches_mb": round(cache_mb, 1), "per_worker_mb": round(worker_mb, 1),
            "workers": WORKERS, "bound_mb": round(baseline_mb + cache_mb + WORKERS * worker_mb, 1)}


def spikes(load_samples, intervals):
    """Transient spikes (a sample SPIKE_MB over the median of the 21 s around it) and the labels of
    the requests in flight in the second before each, against how often each label is in flight
    in the second before any load sample (lift: how much likelier a label is during a spike)."""
    found = []
    rss = [s["rss_mb"] for s in load_samples]
    for i, s in enumerate(load_samples):
        window = sorted(rss[max(0, i - 10):i + 11])
        over = s["rss_mb"] - window[len(window) // 2]
        if over > SPIKE_MB:
            found.append((s["t"], round(over, 1)))
    by_end = sorted(intervals, key=lambda x: x[1])
    ends = [end for _, end, _ in by_end]

    def in_flight(t):
        # Requests that ended after t - 1 and started before t.
        return {label for start, _, label in by_end[bisect.bisect_left(ends, t - 1):] if start <= t}

    presence = collections.Counter()
    for s in load_samples:
        presence.update(in_flight(s["t"]))
    during = collections.Counter()
    for t, _ in found:
        during.update(in_flight(t))
    n, total = max(1, len(found)), max(1, len(load_samples))
    rows = sorted(((label, k, 100 * k / n, 100 * presence[label] / total) for label, k in during.items()),
                  key=lambda x: -(x[2] / max(0.1, x[3])))
    return {"count": len(found), "largest_mb": max((o for _, o in found), default=0), "at": found[:40],
            "labels_in_flight": [{"label": label, "spikes": k, "pct_of_spikes": round(p), "pct_of_samples": round(q, 1),
                                  "lift": round(p / max(0.1, q), 1)} for label, k, p, q in rows[:10]]}


def rss_analysis(samples, intervals, baseline_mb, caches):
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
    # A cross-check that transient spikes cannot sway: the median of the pairwise slopes (Theil-Sen)
    # over every 3rd sample.
    pts = list(zip(xs, ys))[::3]
    pairwise = sorted((b[1] - a[1]) / (b[0] - a[0]) for i, a in enumerate(pts) for b in pts[i + 1:] if b[0] > a[0])
    return {"machine_load1_mean": round(sum(s["load1"] for s in load_samples) / len(load_samples), 1),
            "server_cpu_s": round(load_samples[-1]["cpu_s"] - load_samples[0]["cpu_s"], 1),
            "start_mb": load_samples[0]["rss_mb"], "peak_mb": max(s["rss_mb"] for s in load_samples),
            "peak_first_half_mb": max(first), "peak_second_half_mb": max(s["rss_mb"] for s in second),
            "mean_last5_mb": round(my, 1), "slope_last5_mb_per_min": round(slope, 2), "slope_last5_theil_sen_mb_per_min": round(pairwise[len(pairwise) // 2], 2) if pairwise else None,
            "window_last5_s": round(last5[-1]["t"] - last5[0]["t"]), "bound": rss_bound(baseline_mb, caches),
            "spikes": spikes(load_samples, intervals)}


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
    if FILL > 0:
        smp.phase = "fill"
        log(f"soak: filling the result memory cache to {FILL:.0%} of its limit")
        report["fill"] = fill(port, mix)
        log(f"soak: fill: {report['fill']}")
    report["memory_caches"] = memory_caches(port)
    results = Results()
    stop = threading.Event()
    drops = collections.Counter()
    smp.phase = "load"
    until = time.monotonic() + SECONDS
    threads = [threading.Thread(target=client, args=(port, mix, results, until, stop, smp.t0)) for _ in range(CLIENTS)]
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
    report["rss"] = rss_analysis(smp.samples, results.intervals, baseline["rss_mb"], report["memory_caches"])
    report["samples"] = smp.samples
    judge(report)
    with open(OUT + ".json", "w") as f:
        json.dump(report, f, indent=1, default=str)
    # The memory caches full over the idle baseline, and the bound the configuration allows.
    bound = report["rss"].get("bound", rss_bound(baseline["rss_mb"], report["memory_caches"]))
    limits = plot_limits(baseline["rss_mb"], bound, max(s["rss_mb"] for s in smp.samples))
    sampler.plot(smp.samples, OUT + ".png", f"osprey serve soak: {SECONDS:.0f} s mixed load + faults after the cache fill, "
                 f"--workers {WORKERS} --queue {QUEUE} ({os.path.basename(BIN)})", limits)
    with open(OUT + ".txt", "w") as f:
        f.write(summary(report))
    print(summary(report))
    return 0 if all(report["verdict"].values()) else 1


def plot_limits(baseline_mb, bound, peak_mb):
    """The lines drawn over the RSS curve: the memory caches full, and the configured bound (named
    in the first line's label when it is far off the chart)."""
    label = f"baseline + memory caches ({bound['memory_caches_mb']:.0f} MiB)"
    if bound["bound_mb"] < 2 * peak_mb:
        return {label: baseline_mb + bound["memory_caches_mb"], f"configured bound {bound['bound_mb']:.0f} MiB": bound["bound_mb"]}
    return {f"{label}; configured bound {bound['bound_mb']:.0f} MiB, off the chart": baseline_mb + bound["memory_caches_mb"]}


def judge(r):
    rss, sat, idle = r.get("rss", {}), r.get("saturation", {}), r.get("idle", {})
    total_limit = 2 * r["cache_limit_bytes_each"]
    r["verdict"] = {
        "no crash": not r["crashed"],
        "every answer a correct image or a 4xx/5xx with a reason": r["failure_count"] == 0,
        "none past the deadline + slack": r["late_count"] == 0,
        "memory caches filled before the load": r.get("fill", {}).get("filled", False),
        "RSS peak under the configured bound": bool(rss) and rss["peak_mb"] <= rss["bound"]["bound_mb"],
        f"RSS not growing: last-5-min slope < {SLOPE_LIMIT:g} MiB/min": bool(rss) and rss["slope_last5_mb_per_min"] < SLOPE_LIMIT,
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
    rss = {k: v for k, v in r["rss"].items() if k not in ("bound", "spikes")}
    bound, spk = r["rss"].get("bound", {}), r["rss"].get("spikes", {})
    lines += ["", f"max latency (s): {r['max_latency_s']}", f"fill before the load: {r.get('fill')}",
              f"memory caches after the fill (bytes, limit): {r.get('memory_caches')}", f"RSS: {rss}",
              f"RSS bound: {bound.get('baseline_mb')} baseline + {bound.get('memory_caches_mb')} memory caches + "
              f"{bound.get('workers')} x {bound.get('per_worker_mb')} per worker = {bound.get('bound_mb')} MiB",
              f"transient spikes (> {SPIKE_MB:g} MiB over the 21 s median): {spk.get('count')}, largest {spk.get('largest_mb')} MiB; "
              "in flight during them (label: spikes, % of spikes, % of all load samples, lift):",
              *[f"  {x['label']:17} {x['spikes']:4} {x['pct_of_spikes']:4}% {x['pct_of_samples']:5}% {x['lift']:5}x" for x in spk.get("labels_in_flight", [])],
              f"baseline: rss {r['baseline']['rss_mb']} MiB, fds {r['baseline']['fds']}",
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
