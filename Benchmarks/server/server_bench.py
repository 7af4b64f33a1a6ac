#!/usr/bin/env python3
"""Scenario 9: `osprey serve` against thumbor 7.8 under wrk, on one loopback nginx origin.

Run through `bash Benchmarks/run.sh 9` (which installs wrk, nginx and thumbor and builds the
binaries; see Benchmarks/server/run-server-bench.sh). Every figure is a ratio of two rates measured
in the same run, repetition by repetition, with the order of the participants alternating:

- misses: every request names a new source URL (a token in the path the origin ignores), so neither
  server can answer from a cache; osprey serve vs thumbor, and vs the in-process libvips limit of
  the same operation (`OspreyBench limit9`: vips_thumbnail_buffer + jpegsave/webpsave, as
  imgproxy runs libvips);
- hits: the same URLs again and again; osprey serve from its memory cache, and from its disk
  cache alone (a fresh process over the warmed cache directory with --memory-cache-mb 0), vs
  nginx serving the same result bytes as static files (the ceiling for a cached answer); thumbor
  (no result storage) on the same load for reference.

The operation is thumbor's `fit-in/512x512/filters:quality(80):format(jpeg|webp)`, the same URL
path for both servers. Each measured run starts the server afresh, warms it up with a short
uncounted wrk run, then runs `wrk -t T -c C -d D --timeout 30s --latency`-equivalent (the Lua
script prints wrk's own percentiles). Results: a text table and a JSON file.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import scratchfs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WRK_SCRIPT = os.path.join(HERE, "wrk-paths.lua")
OPERATION = "fit-in/512x512/filters:quality(80):format({fmt})"


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=60):
    """(status, content type, body) of a GET; errors become their status."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def wait_ready(url, process, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode} before it was ready")
        try:
            if http_get(url, timeout=2)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} not ready after {seconds} s")


def peak_rss_mb(pid):
    """The process's peak resident set (VmHWM), in MB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Nginx:
    """nginx on a loopback port with `locations` (nginx location blocks) in its server block."""

    def __init__(self, scratch, name, locations, workers=1, access_log=False):
        self.dir = os.path.join(scratch, name)
        os.makedirs(self.dir, exist_ok=True)
        nginx = next(p for p in ("/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK))
        self.port = free_port()
        log_line = f"access_log {self.dir}/access.log;" if access_log else "access_log off;"
        user = "user root;" if os.getuid() == 0 else ""
        config = f"""{user}
worker_processes {workers};
daemon off;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    {log_line}
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    open_file_cache max=1000 inactive=60s;
    client_body_temp_path {self.dir}/body;
    proxy_temp_path {self.dir}/proxy;
    types {{ image/jpeg jpg jpeg; image/png png; image/gif gif; image/webp webp; image/avif avif; image/tiff tif tiff; }}
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{self.port};
{locations}
    }}
}}
"""
        with open(os.path.join(self.dir, "nginx.conf"), "w") as f:
            f.write(config)
        self.process = subprocess.Popen([nginx, "-e", f"{self.dir}/error.log", "-p", self.dir, "-c", f"{self.dir}/nginx.conf"])
        self.access_log = os.path.join(self.dir, "access.log")

    def wait(self, probe_path):
        wait_ready(f"http://127.0.0.1:{self.port}{probe_path}", self.process)

    def log_lines(self):
        try:
            with open(self.access_log, "rb") as f:
                return sum(1 for _ in f)
        except OSError:
            return 0

    def stop(self):
        stop(self.process)


class Bench:
    def __init__(self, args):
        self.args = args
        # Caches and thumbor's storage on a fresh file system (see Benchmarks/scratchfs.py).
        self.scratch = scratchfs.up(args.scratch or tempfile.gettempdir(), "osprey-server-bench.")
        self.cores = args.cores
        self.runs = []  # every measured run, for the JSON file
        self.notes = [] if scratchfs.is_fresh(self.scratch) else [
            f"scratch files on the file system of {args.scratch or tempfile.gettempdir()}, not a fresh one (scratchfs.py)"]

    # ---------- servers ----------

    def start_osprey(self, cache_dir, memory_mb=None):
        port = free_port()
        argv = [self.args.osprey, "serve", "--host", "127.0.0.1", "--port", str(port), "--allow-loopback-sources",
                "--cache-dir", cache_dir]
        if memory_mb is not None:
            argv += ["--memory-cache-mb", str(memory_mb)]
        argv += self.args.osprey_arg
        env = dict(os.environ)
        env.pop("VIPS_CONCURRENCY", None)
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.scratch, "osprey.log"), "ab"), env=env)
        wait_ready(f"http://127.0.0.1:{port}/health", process)
        return process, port, argv

    def start_thumbor(self, storage_dir):
        port = free_port()
        conf = os.path.join(self.scratch, f"thumbor-{port}.conf")
        with open(conf, "w") as f:
            f.write(f"""# scenario 9: thumbor as documented for production, minus result storage (the issue's setup)
ENGINE_THREADPOOL_SIZE = {self.cores}
RESULT_STORAGE = None
STORAGE = 'thumbor.storages.file_storage'
FILE_STORAGE_ROOT_PATH = '{storage_dir}'
LOADER = 'thumbor.loaders.http_loader'
ALLOW_UNSAFE_URL = True
QUALITY = 80
WEBP_QUALITY = 80
""")
        argv = [self.args.thumbor, "--ip", "127.0.0.1", "--port", str(port), "--conf", conf, "--log-level", "error"]
        env = dict(os.environ)
        env.pop("VIPS_CONCURRENCY", None)
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.scratch, "thumbor.log"), "ab"), env=env)
        wait_ready(f"http://127.0.0.1:{port}/healthcheck", process)
        return process, port, argv

    # ---------- wrk ----------

    def wrk(self, port, paths, mode, tag, seconds, check, script=WRK_SCRIPT):
        """One wrk run over `paths` (for wrk-upload.lua: files to POST); its JSON line as a dict."""
        list_file = os.path.join(self.scratch, f"paths-{tag}.txt")
        with open(list_file, "w") as f:
            f.write("\n".join(paths) + "\n")
        argv = ["wrk", "-t", str(self.args.wrk_threads), "-c", str(self.args.connections), "-d", f"{seconds}s",
                "--timeout", "30s", "-s", script, f"http://127.0.0.1:{port}", "--", list_file, mode, tag]
        env = dict(os.environ, WRK_CHECK="1" if check else "0")
        out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=seconds + 120)
        line = next((l for l in out.stdout.splitlines() if l.startswith("{")), None)
        if out.returncode != 0 or line is None:
            raise RuntimeError(f"wrk failed ({out.returncode}): {out.stdout[-2000:]} {out.stderr[-2000:]}")
        result = json.loads(line)
        result["rate"] = result["requests"] / result["seconds"]
        result["command"] = " ".join(a if " " not in a else repr(a) for a in argv)
        non2xx = next((l for l in out.stdout.splitlines() if "Non-2xx" in l), None)
        result["non2xx"] = int(non2xx.split(":")[1]) if non2xx else 0
        return result

    def measure(self, case, participant, port, paths, mode, process, seconds, check, origin=None):
        """Warm-up (uncounted), then the measured wrk run; the answers must all be images."""
        self.wrk(port, paths, mode, f"w{len(self.runs)}", self.args.warmup, check)
        before = origin.log_lines() if origin else 0
        result = self.wrk(port, paths, mode, f"m{len(self.runs)}", seconds, check)
        result["origin_fetches"] = (origin.log_lines() - before) if origin else None
        result["peak_rss_mb"] = peak_rss_mb(process.pid) if process else float("nan")
        result.update(case=case, participant=participant)
        errors = result["non2xx"] + result["bad"] + result["timeouts"] + result["status_errors"]
        if errors or result["requests"] == 0:
            # Kept (a later repetition may still be good) but flagged in the report.
            self.notes.append(f"INVALID run: {case} / {participant}: {result['requests']} answers, {errors} bad answers or errors "
                              f"(non-2xx {result['non2xx']}, wrong type {result['bad']}, timeouts {result['timeouts']})")
            result["invalid"] = True
        log(f"  {case:28} {participant:22} {result['rate']:9.1f} req/s  p50 {result['p50_us']/1000:7.1f} ms  p99 {result['p99_us']/1000:7.1f} ms"
            f"  rss {result['peak_rss_mb']:6.0f} MB  origin {result['origin_fetches']}")
        self.runs.append(result)
        return result

    # ---------- setup ----------

    def image_url(self, fmt, cls, name, unique):
        token = "{u}" if unique else "fixed"
        return f"/unsafe/{OPERATION.format(fmt=fmt)}/http://127.0.0.1:{self.origin.port}/{token}/{cls}/{name}"

    def select_files(self, classes):
        """The files of each class that both servers turn into the asked format (thumbor answers
        animated GIFs as GIF whatever the format filter says)."""
        thumbor, tport, _ = self.start_thumbor(os.path.join(self.scratch, "thumbor-probe"))
        osprey, oport, _ = self.start_osprey(os.path.join(self.scratch, "osprey-probe"))
        try:
            selected = {}
            for cls, directory in classes.items():
                keep, dropped = [], []
                for name in sorted(os.listdir(directory)):
                    if name.startswith("."):
                        continue
                    reasons = []
                    for fmt in ("jpeg", "webp"):
                        path = self.image_url(fmt, cls, name, unique=False).replace("/fixed/", "/probe/")
                        for who, port in (("thumbor", tport), ("osprey", oport)):
                            status, ctype, body = http_get(f"http://127.0.0.1:{port}{path}")
                            magic_ok = body[:2] == b"\xff\xd8" if fmt == "jpeg" else (body[:4] == b"RIFF" and body[8:12] == b"WEBP")
                            if status != 200 or ctype != f"image/{fmt}" or not magic_ok:
                                reasons.append(f"{who} {fmt}: {status} {ctype}")
                    (dropped if reasons else keep).append((name, reasons))
                selected[cls] = [n for n, _ in keep]
                for name, reasons in dropped:
                    self.notes.append(f"{cls}: {name} left out ({'; '.join(reasons)})")
                log(f"{cls}: {len(selected[cls])} files: {', '.join(selected[cls])}")
            return selected
        finally:
            stop(thumbor)
            stop(osprey)

    def limit(self, fmt, files, copies):
        argv = [self.args.ospreybench, "limit9", fmt, str(self.cores), str(copies)] + files
        env = dict(os.environ, VIPS_CONCURRENCY="1")
        out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
        line = next((l for l in out.stdout.splitlines() if l.startswith("{")), None)
        if out.returncode != 0 or line is None:
            raise RuntimeError(f"limit9 failed: {out.stdout[-1000:]} {out.stderr[-1000:]}")
        result = json.loads(line)
        if result["failed"]:
            raise RuntimeError(f"libvips could not process {result['failed']}")
        return result

    # ---------- the run ----------

    def run(self):
        a = self.args
        classes = {"small": a.small, "large": a.large}
        if a.only_class:
            classes = {k: v for k, v in classes.items() if k in a.only_class}
        locations = []
        for cls, directory in classes.items():
            locations.append(f"        location ~ ^/[^/]+/{cls}/(.+)$ {{ alias {os.path.abspath(directory)}/$1; }}")
        self.origin = Nginx(self.scratch, "origin", "\n".join(locations), workers=1, access_log=True)
        first_class = next(iter(classes))
        self.origin.wait(f"/probe/{first_class}/{sorted(n for n in os.listdir(classes[first_class]) if not n.startswith('.'))[0]}")
        try:
            files = self.select_files(classes)
            formats = a.formats
            if not os.access(a.ospreybench, os.X_OK):
                self.notes.append(f"no libvips limit: {a.ospreybench} is not built")
            # libvips warm-up (not counted)
            for cls in (classes if os.access(a.ospreybench, os.X_OK) else []):
                self.limit("jpeg", [os.path.join(classes[cls], n) for n in files[cls]], 1)
            for rep in range(a.reps):
                log(f"repetition {rep + 1}/{a.reps}  (load: {os.getloadavg()[0]:.2f})")
                order = ["osprey", "thumbor"] if rep % 2 == 0 else ["thumbor", "osprey"]
                if "miss" in a.cases:
                    for cls in classes:
                        seconds = a.duration_large if cls == "large" else a.duration
                        for fmt in formats:
                            case = f"miss {cls} {fmt}"
                            paths = [self.image_url(fmt, cls, n, unique=True) for n in files[cls]]
                            for who in order:
                                self.miss_run(case, who, paths, seconds, rep)
                            paths_on_disk = [os.path.join(classes[cls], n) for n in files[cls]]
                            copies = a.limit_copies_large if cls == "large" else a.limit_copies_small
                            if not os.access(a.ospreybench, os.X_OK):
                                continue
                            r = self.limit(fmt, paths_on_disk, copies)
                            r.update(case=case, participant="libvips limit", rate=r["images_per_s"], rep=rep)
                            log(f"  {case:28} {'libvips limit':22} {r['rate']:9.1f} images/s")
                            self.runs.append(r)
                if "hit" in a.cases:
                    for cls in classes:
                        for fmt in a.hit_formats:
                            self.hit_runs(f"hit {cls} {fmt}", cls, fmt, files[cls], rep, order)
        finally:
            self.origin.stop()

    def miss_run(self, case, who, paths, seconds, rep):
        data = os.path.join(self.scratch, f"data-{len(self.runs)}")
        if who == "osprey":
            process, port, argv = self.start_osprey(data)
        else:
            process, port, argv = self.start_thumbor(data)
        try:
            r = self.measure(case, who, port, paths, "unique", process, seconds, check=True, origin=self.origin)
            r.update(rep=rep, server=" ".join(argv))
            if who == "osprey":
                r["phases_ms"] = self.phases(port)
            if r["origin_fetches"] < r["requests"]:
                self.notes.append(f"INVALID run: {case} / {who}: {r['requests']} answers but only {r['origin_fetches']} origin fetches: not all misses")
                r["invalid"] = True
        finally:
            stop(process)
            shutil.rmtree(data, ignore_errors=True)

    def cache_levels(self, port):
        """osprey's cache-level counters from /metrics (`result_memory`, `result_disk`, `miss`...)."""
        metrics = http_get(f"http://127.0.0.1:{port}/metrics")[2].decode()
        return {l.split('"')[1]: float(l.split()[-1]) for l in metrics.splitlines() if l.startswith("osprey_cache_hits_total{")}

    def phases(self, port):
        """osprey's mean time per request by phase (queue, fetch = download + decode + process,
        encode, total), in ms, over the process's life (warm-up included)."""
        sums, counts = {}, {}
        for line in http_get(f"http://127.0.0.1:{port}/metrics")[2].decode().splitlines():
            for table, suffix in ((sums, "_sum{"), (counts, "_count{")):
                if line.startswith("osprey_request_duration_seconds" + suffix):
                    table[line.split('"')[1]] = float(line.split()[-1])
        return {k: round(sums[k] / counts[k] * 1000, 2) for k in sums if counts.get(k)}

    def hit_runs(self, case, cls, fmt, names, rep, order):
        """osprey from memory, osprey from disk alone, nginx serving the same bytes, thumbor."""
        seconds = self.args.duration
        paths = [self.image_url(fmt, cls, n, unique=False) for n in names]
        cache = os.path.join(self.scratch, f"hitcache-{len(self.runs)}")
        static = os.path.join(self.scratch, f"static-{len(self.runs)}")
        ext = "jpg" if fmt == "jpeg" else fmt
        static_paths = [f"/s/{os.path.splitext(n)[0]}.{ext}" for n in names]
        os.makedirs(static)

        def osprey_memory():
            # Every URL once (a miss each, which fills both cache levels), its bytes kept for nginx;
            # then the measured run, all from the memory cache.
            process, port, argv = self.start_osprey(cache)
            try:
                for path, static_path in zip(paths, static_paths):
                    status, ctype, body = http_get(f"http://127.0.0.1:{port}{path}")
                    if status != 200 or ctype != f"image/{fmt}" or not body:
                        raise RuntimeError(f"warming {path}: {status} {ctype}")
                    with open(os.path.join(static, os.path.basename(static_path)), "wb") as f:
                        f.write(body)
                    if http_get(f"http://127.0.0.1:{port}{path}")[2] != body:
                        raise RuntimeError(f"{path}: the cached answer differs from the first")
                before = self.cache_levels(port).get("result_memory", 0)
                r = self.measure(case, "osprey (memory hit)", port, paths, "fixed", process, seconds, check=False)
                levels = self.cache_levels(port)
                if levels.get("result_memory", 0) - before < r["requests"]:
                    raise RuntimeError(f"memory-hit run was not all memory hits: {levels}")
                r.update(rep=rep, server=" ".join(argv), cache_levels=levels)
            finally:
                stop(process)

        def osprey_disk():
            # A fresh process over the warmed cache directory, with no memory cache at all.
            process, port, argv = self.start_osprey(cache, memory_mb=0)
            try:
                r = self.measure(case, "osprey (disk hit)", port, paths, "fixed", process, seconds, check=False)
                levels = self.cache_levels(port)
                if levels.get("result_memory", 0) > 0 or levels.get("result_disk", 0) < r["requests"]:
                    raise RuntimeError(f"disk-hit run was not all disk hits: {levels}")
                r.update(rep=rep, server=" ".join(argv), cache_levels=levels)
            finally:
                stop(process)

        def nginx_static():
            workers = self.cores
            n = Nginx(self.scratch, f"static-nginx-{len(self.runs)}", f"        location /s/ {{ alias {static}/; }}", workers=workers)
            try:
                n.wait(static_paths[0])
                for sp in static_paths:
                    st, ct, body = http_get(f"http://127.0.0.1:{n.port}{sp}")
                    if st != 200 or ct != f"image/{fmt}" or not body:
                        raise RuntimeError(f"static {sp}: {st} {ct}")
                r = self.measure(case, "nginx static", n.port, static_paths, "fixed", n.process, seconds, check=False)
                r.update(rep=rep, server=f"nginx worker_processes {workers}, sendfile, access_log off, open_file_cache "
                                         "(the result bytes osprey served, as files)",
                         peak_rss_mb=float("nan"))
            finally:
                n.stop()

        def thumbor_same():
            data = os.path.join(self.scratch, f"thumbor-hit-{len(self.runs)}")
            process, port, argv = self.start_thumbor(data)
            try:
                r = self.measure(case, "thumbor (no result storage)", port, paths, "fixed", process, seconds, check=False)
                r.update(rep=rep, server=" ".join(argv))
            finally:
                stop(process)
                shutil.rmtree(data, ignore_errors=True)

        try:
            # osprey (memory) makes the static files, so it goes first; nginx and osprey's disk
            # run alternate behind it.
            osprey_memory()
            if order[0] == "osprey":
                osprey_disk()
                nginx_static()
            else:
                nginx_static()
                osprey_disk()
            if self.args.thumbor_hits:
                thumbor_same()
        finally:
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(static, ignore_errors=True)

    # ---------- report ----------

    def report(self, started):
        a = self.args
        lines = []
        machine = "unknown"
        try:
            with open("/proc/cpuinfo") as f:
                machine = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), machine)
        except OSError:
            pass
        lines.append(f"# Scenario 9: osprey serve vs thumbor {a.thumbor_version} under wrk — {started}, {os.cpu_count()} cores ({machine})")
        lines.append(f"# wrk -t{a.wrk_threads} -c{a.connections} --timeout 30s, {a.reps} repetitions (order alternating), "
                     f"{a.duration} s per run ({a.duration_large} s for misses on the 4000×3000 photos), {a.warmup} s uncounted warm-up per server start")
        lines.append(f"# operation: /unsafe/{OPERATION.format(fmt='jpeg|webp')}/http://127.0.0.1:ORIGIN/TOKEN/CLASS/FILE")
        lines.append(f"# load average at the start / end: {self.load_start} / {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        lines.append("")

        def runs_of(case, who):
            return sorted((r for r in self.runs if r["case"] == case and r["participant"] == who), key=lambda r: r["rep"])

        def fmt_ratio(values):
            if not values:
                return "-"
            return f"{statistics.median(values):.2f}× [{min(values):.2f}..{max(values):.2f}]"

        def med(values, scale=1.0, digits=1):
            return f"{statistics.median(values) / scale:.{digits}f}" if values else "-"

        goals = {
            ("miss", "large", "thumbor"): 2.5, ("miss", "small", "thumbor"): 1.0,
            ("miss", "large", "libvips limit"): 0.8, ("miss", "small", "libvips limit"): 0.8,
            ("hit", None, "nginx static"): 0.5,
        }
        summary = []
        lines.append("| case | osprey serve | baseline | ratio, median [min..max] | goal | osprey req/s | baseline req/s | osprey p50 / p99 ms | baseline p50 / p99 ms | peak RSS MB osprey / baseline |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|")
        cases = []
        for r in self.runs:
            if r["case"] not in cases:
                cases.append(r["case"])
        for case in cases:
            kind, cls, fmt = case.split()
            pairs = []
            if kind == "miss":
                pairs = [("osprey", "thumbor"), ("osprey", "libvips limit")]
            else:
                pairs = [("osprey (memory hit)", "nginx static"), ("osprey (disk hit)", "nginx static"),
                         ("osprey (memory hit)", "thumbor (no result storage)")]
            for who, base in pairs:
                # Pairs of the same repetition, both valid (no error answer, every miss a miss).
                by_rep = {r["rep"]: r for r in runs_of(case, base) if not r.get("invalid")}
                pairs_ok = [(x, by_rep[x["rep"]]) for x in runs_of(case, who) if not x.get("invalid") and x["rep"] in by_rep]
                if not pairs_ok:
                    continue
                o, b = [x for x, _ in pairs_ok], [y for _, y in pairs_ok]
                ratios = [x["rate"] / y["rate"] for x, y in pairs_ok if y["rate"] > 0]
                if not ratios:
                    continue
                goal = goals.get((kind, cls, base)) or goals.get((kind, None, base))
                if kind == "hit" and who != "osprey (memory hit)":
                    goal = None
                met = "" if goal is None else ("met" if statistics.median(ratios) >= goal else "NOT met")
                goal_text = "-" if goal is None else f"≥ {goal}× ({met})"
                lat = lambda rs: f"{med([x['p50_us'] for x in rs], 1000)} / {med([x['p99_us'] for x in rs], 1000)}" if "p50_us" in rs[0] else "-"
                rss = lambda rs: med([x["peak_rss_mb"] for x in rs], 1, 0) if "peak_rss_mb" in rs[0] else "-"
                lines.append(f"| {case} | {who} | {base} | {fmt_ratio(ratios)} | {goal_text} | {med([x['rate'] for x in o])} | "
                             f"{med([x['rate'] for x in b])} | {lat(o)} | {lat(b)} | {rss(o)} / {rss(b)} |")
                summary.append(dict(case=case, participant=who, baseline=base, ratios=ratios,
                                    ratio_median=statistics.median(ratios), goal=goal,
                                    rates=[x["rate"] for x in o], baseline_rates=[x["rate"] for x in b]))
        lines.append("")
        lines.append("Per run (req/s; libvips limit: images/s):")
        for case in cases:
            for who in sorted({r["participant"] for r in self.runs if r["case"] == case}):
                rs = runs_of(case, who)
                detail = ", ".join(f"{x['rate']:.1f}" for x in rs)
                extra = ""
                if "p99_us" in rs[0]:
                    extra = "; p99 ms " + ", ".join(f"{x['p99_us']/1000:.0f}" for x in rs)
                    extra += "; requests " + ", ".join(str(x["requests"]) for x in rs)
                if "phases_ms" in rs[0]:
                    extra += "; mean ms by phase " + ", ".join(
                        "/".join(f"{k} {v:.0f}" for k, v in sorted(x["phases_ms"].items())) for x in rs)
                lines.append(f"  {case} / {who}: {detail}{extra}")
        if self.notes:
            lines.append("")
            lines.extend(f"note: {n}" for n in self.notes)
        lines.append("")
        lines.append("commands (one measured run of each kind):")
        seen = set()
        for r in self.runs:
            key = (r["case"].split()[0], r["participant"])
            if key in seen or "command" not in r:
                continue
            seen.add(key)
            lines.append(f"  {key[0]} / {key[1]}: server: {r.get('server', '')}")
            lines.append(f"      load: {r['command']}")
        text = "\n".join(lines) + "\n"
        print(text)
        if a.out_txt:
            with open(a.out_txt, "w") as f:
                f.write(text)
        if a.out_json:
            with open(a.out_json, "w") as f:
                json.dump(dict(date=started, cores=os.cpu_count(), machine=machine, args=vars(a), notes=self.notes,
                               summary=summary, runs=self.runs), f, indent=1, default=str)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--osprey", required=True, help="the release osprey binary")
    p.add_argument("--thumbor", required=True, help="the thumbor executable of the virtualenv")
    p.add_argument("--thumbor-version", default="7.8.0")
    p.add_argument("--ospreybench", required=True, help="the release OspreyBench binary (libvips limit)")
    p.add_argument("--small", required=True, help="directory of the test images")
    p.add_argument("--large", required=True, help="directory of the 4000×3000 photos")
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--duration", type=int, default=10, help="seconds per measured run")
    p.add_argument("--duration-large", type=int, default=15, help="seconds per measured miss run on the photos")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--connections", type=int, default=8)
    p.add_argument("--wrk-threads", type=int, default=2)
    p.add_argument("--cases", default="miss,hit")
    p.add_argument("--formats", default="jpeg,webp")
    p.add_argument("--hit-formats", default="jpeg")
    p.add_argument("--only-class", default="")
    p.add_argument("--thumbor-hits", type=int, default=1)
    p.add_argument("--limit-copies-small", type=int, default=20)
    p.add_argument("--limit-copies-large", type=int, default=6)
    p.add_argument("--osprey-arg", action="append", default=[], help="extra flag for osprey serve (repeatable)")
    p.add_argument("--scratch", default=None)
    p.add_argument("--out-txt")
    p.add_argument("--out-json")
    a = p.parse_args()
    a.cases = a.cases.split(",")
    a.formats = a.formats.split(",")
    a.hit_formats = [f for f in a.hit_formats.split(",") if f]
    a.only_class = [c for c in a.only_class.split(",") if c]
    started = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    bench = Bench(a)
    bench.load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    try:
        bench.run()
    finally:
        bench.report(started)
        scratchfs.down(bench.scratch)


if __name__ == "__main__":
    main()
