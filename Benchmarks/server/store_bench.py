#!/usr/bin/env python3
"""Issue 43's benchmarks, side by side in one run, interleaved repetition by repetition:

1. local-source misses: `osprey serve --local-root` reading the test images from disk (thumbor bare
   paths) against the same images fetched over a loopback nginx origin (`http://` URLs), the same
   operation as scenario 9 (`fit-in/512x512/filters:quality(80):format(jpeg)`); ratio local/origin
   (goal >= 1.0). Every request names a file not asked before in that server process (hard links
   `l/m/K/NAME` of the images; each measured run starts a fresh process with an empty cache);
2. upload throughput: POST of the test images (raw body, `Slug`), wrk with 8 connections, `osprey
   serve --upload` against thumbor 7.8's upload API (UPLOAD_ENABLED, file storage);
3. `/info` (`/info/unsafe/SOURCE`) against thumbor's `meta/` (`/unsafe/meta/SOURCE`) on the
   4000x3000 photos, each request a new source URL over the nginx origin (a token the origin
   ignores), so neither answers from a cache; Osprey's own `meta/` too (the same information as
   thumbor's, from the header alone; `/info` adds a 100 px decode for ThumbHash/BlurHash/colour).

    python3 Benchmarks/server/store_bench.py --osprey .build/release/osprey \
        --thumbor Benchmarks/.work/thumbor-venv/bin/thumbor [--reps 3] [--duration 10] \
        [--include FILE ...] --out-txt Benchmarks/results/DATE-uploads-local-info.txt

Reuses server_bench.py's nginx origin, server start-up and wrk runner (wrk-paths.lua for GETs,
wrk-upload.lua for POSTs); the thumbor virtualenv is the one server_bench makes from
thumbor-requirements.txt. Reported per run: rate, the server process's CPU per request (utime +
stime from /proc, over the measured run), p50/p99, the load average at its start. `--include`
copies text files (the upload parity summary, the cluster check) into the report. Not run in CI.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import urllib.request
from datetime import datetime, timezone

import server_bench as sb  # the same directory

OPERATION = "fit-in/512x512/filters:quality(80):format(jpeg)"
UPLOAD_SCRIPT = os.path.join(sb.HERE, "wrk-upload.lua")
ROOT = os.path.abspath(os.path.join(sb.HERE, "..", ".."))
PHOTOS = ("astronaut.png", "chelsea.png", "coffee.png", "hubble_deep_field.jpg", "motorcycle_left.png", "rocket.jpg")


def cpu_seconds(pid):
    """utime + stime of the process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def post(port, path, body, headers):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


class StoreBench:
    def __init__(self, args):
        self.args = args
        self.bench = sb.Bench(args)  # scratch file system, wrk runner, notes
        self.scratch = self.bench.scratch
        self.runs = []
        self.servers = 0

    # ---------- servers ----------

    def start_osprey(self, extra):
        self.servers += 1
        port = sb.free_port()
        argv = [self.args.osprey, "serve", "--host", "127.0.0.1", "--port", str(port), "--allow-loopback-sources",
                "--cache-dir", os.path.join(self.scratch, f"osprey-{self.servers}")] + extra
        env = dict(os.environ)
        env.pop("VIPS_CONCURRENCY", None)
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env,
                                   stderr=open(os.path.join(self.scratch, "osprey.log"), "ab"))
        sb.wait_ready(f"http://127.0.0.1:{port}/health", process)
        return process, port

    def start_thumbor(self):
        """thumbor as scenario 9 runs it (no result storage, file storage), with uploads enabled."""
        self.servers += 1
        port = sb.free_port()
        storage = os.path.join(self.scratch, f"thumbor-{self.servers}")
        conf = storage + ".conf"
        with open(conf, "w") as f:
            f.write(f"ENGINE_THREADPOOL_SIZE = {self.args.cores}\nRESULT_STORAGE = None\n"
                    f"STORAGE = 'thumbor.storages.file_storage'\nFILE_STORAGE_ROOT_PATH = '{storage}'\n"
                    "LOADER = 'thumbor.loaders.http_loader'\nALLOW_UNSAFE_URL = True\nQUALITY = 80\n"
                    "UPLOAD_ENABLED = True\n")
        env = dict(os.environ)
        env.pop("VIPS_CONCURRENCY", None)
        process = subprocess.Popen([self.args.thumbor, "--ip", "127.0.0.1", "--port", str(port), "--conf", conf,
                                    "--log-level", "error"], stdout=subprocess.DEVNULL, env=env,
                                   stderr=open(os.path.join(self.scratch, "thumbor.log"), "ab"))
        sb.wait_ready(f"http://127.0.0.1:{port}/healthcheck", process)
        return process, port

    # ---------- one measured run ----------

    def measure(self, case, who, start, warm, paths, mode, script=sb.WRK_SCRIPT, check=False, rep=0):
        """A fresh server, an uncounted warm-up over `warm`, the measured wrk run over `paths`."""
        process, port = start()
        try:
            self.bench.wrk(port, warm, mode, f"w{len(self.runs)}", self.args.warmup, check, script)
            load = os.getloadavg()[0]
            origin_before = self.origin.log_lines()
            cpu_before = cpu_seconds(process.pid)
            r = self.bench.wrk(port, paths, mode, f"m{len(self.runs)}", self.args.duration, check, script)
            cpu = cpu_seconds(process.pid) - cpu_before
            r.update(case=case, participant=who, rep=rep, load1=load, origin_fetches=self.origin.log_lines() - origin_before,
                     cpu_ms_per_request=1000 * cpu / max(r["requests"], 1), cpu_cores=cpu / r["seconds"],
                     peak_rss_mb=sb.peak_rss_mb(process.pid))
        finally:
            sb.stop(process)
        errors = r["non2xx"] + r["bad"] + r["timeouts"] + r["status_errors"]
        if errors or r["requests"] == 0:
            r["invalid"] = True
            self.bench.notes.append(f"INVALID run: {case} / {who} rep {rep + 1}: {r['requests']} answers, {errors} errors "
                                    f"(non-2xx {r['non2xx']}, bad {r['bad']}, timeouts {r['timeouts']})")
        sb.log(f"  {case:22} {who:28} {r['rate']:8.1f} req/s  cpu {r['cpu_ms_per_request']:7.2f} ms/req  "
               f"p99 {r['p99_us'] / 1000:7.1f} ms  load {load:.2f}  origin {r['origin_fetches']}")
        self.runs.append(r)
        return r

    # ---------- setup ----------

    def prepare(self):
        a = self.args
        tree = os.path.join(self.scratch, "tree")  # the local root and the origin's root
        images = os.path.join(tree, "images")
        os.makedirs(images)
        names = sorted(n for n in os.listdir(a.images) if not n.startswith("."))
        for name in names:
            shutil.copy(os.path.join(a.images, name), images)
        # hard links: l/w/K/NAME for warm-ups, l/m/K/NAME for measured runs (same inodes, page cache)
        for group, copies in (("w", a.warm_copies), ("m", a.copies)):
            for k in range(copies):
                os.makedirs(os.path.join(tree, "l", group, str(k)))
                for name in names:
                    os.link(os.path.join(images, name), os.path.join(tree, "l", group, str(k), name))
        photos = a.photos or os.path.join(ROOT, "Benchmarks", ".work", "large")
        if not os.path.isdir(photos) or not [n for n in os.listdir(photos) if n.endswith(".jpg")]:
            os.makedirs(photos, exist_ok=True)
            for name in PHOTOS:  # as Benchmarks/run.sh makes them
                subprocess.check_call(["vips", "thumbnail", os.path.join(a.images, name),
                                       os.path.join(photos, f"large_{os.path.splitext(name)[0]}.jpg[Q=90]"),
                                       "4000", "--height", "3000", "--size", "force"])
        self.photos = sorted(n for n in os.listdir(photos) if n.endswith(".jpg"))
        self.origin = sb.Nginx(self.scratch, "origin", f"        location ^~ /l/ {{ root {tree}; }}\n"
                               f"        location ~ ^/p/[^/]+/(.+)$ {{ alias {os.path.abspath(photos)}/$1; }}",
                               workers=1, access_log=True)
        self.origin.wait(f"/p/probe/{self.photos[0]}")
        self.tree = tree
        self.local_args = ["--local-root", tree]
        self.select(names)

    def select(self, names):
        """The images every participant takes: 200 image/jpeg by path and over the origin; 201 for
        an upload on both servers."""
        osprey, oport = self.start_osprey(self.local_args + ["--upload", "--upload-dir", os.path.join(self.scratch, "probe-up")])
        thumbor, tport = self.start_thumbor()
        self.local_names, self.upload_names = [], []
        try:
            for name in names:
                answers = [sb.http_get(f"http://127.0.0.1:{oport}{self.local_url(name, 'w', 0, remote)}")[:2] for remote in (False, True)]
                if all(a == (200, "image/jpeg") for a in answers):
                    self.local_names.append(name)
                else:
                    self.bench.notes.append(f"local/origin: {name} left out ({answers})")
                with open(os.path.join(self.tree, "images", name), "rb") as f:
                    body = f.read()
                statuses = [post(port, "/image", body, {"Slug": name, "Content-Type": "application/octet-stream"})
                            for port in (oport, tport)]
                if statuses == [201, 201]:
                    self.upload_names.append(name)
                else:
                    self.bench.notes.append(f"uploads: {name} left out (osprey {statuses[0]}, thumbor {statuses[1]})")
            photo = self.photos[0]
            for port, path in ((oport, self.info_url("osprey", photo).replace("{u}", "probe")),
                               (tport, self.info_url("thumbor", photo).replace("{u}", "probe"))):
                status, ctype, body = sb.http_get(f"http://127.0.0.1:{port}{path}")
                if status != 200 or b"4000" not in body:
                    raise RuntimeError(f"{path}: {status} {ctype} {body[:300]!r}")
        finally:
            sb.stop(osprey)
            sb.stop(thumbor)
        sb.log(f"local/origin: {len(self.local_names)} images; uploads: {len(self.upload_names)}; photos: {len(self.photos)}")

    def local_url(self, name, group, k, remote):
        path = f"l/{group}/{k}/{name}"
        return f"/unsafe/{OPERATION}/" + (f"http://127.0.0.1:{self.origin.port}/{path}" if remote else path)

    def info_url(self, who, photo):
        source = f"http://127.0.0.1:{self.origin.port}/p/{{u}}/{photo}"
        return f"/info/unsafe/{source}" if who == "osprey" else f"/unsafe/meta/{source}"  # thumbor's and osprey's meta/

    # ---------- the run ----------

    def run(self):
        a = self.args
        self.prepare()
        upload_dirs = iter(range(1_000_000))
        for rep in range(a.reps):
            sb.log(f"repetition {rep + 1}/{a.reps}  (load: {os.getloadavg()[0]:.2f})")
            flip = rep % 2 == 1
            # 1. local-source misses vs the same images over the nginx origin
            pair = [("local (--local-root)", False), ("nginx origin (http)", True)]
            for who, remote in (reversed(pair) if flip else pair):
                warm = [self.local_url(n, "w", k, remote) for k in range(a.warm_copies) for n in self.local_names]
                paths = [self.local_url(n, "m", k, remote) for k in range(a.copies) for n in self.local_names]
                self.measure("local-source misses", who, lambda: self.start_osprey(self.local_args), warm, paths, "fixed", rep=rep)
            # 2. uploads
            files = [os.path.join(self.tree, "images", n) for n in self.upload_names]
            pair = [("osprey --upload", lambda: self.start_osprey(
                        ["--upload", "--upload-dir", os.path.join(self.scratch, f"uploads-{next(upload_dirs)}")])),
                    ("thumbor 7.8 upload API", self.start_thumbor)]
            for who, start in (reversed(pair) if flip else pair):
                self.measure("upload POST", who, start, files, files, "fixed", script=UPLOAD_SCRIPT, rep=rep)
            # 3. /info vs meta/ on the photos, every request a new source URL
            trio = [("osprey /info", "osprey"), ("thumbor meta/", "thumbor"), ("osprey meta/", "osprey-meta")]
            for who, kind in (reversed(trio) if flip else trio):
                start = self.start_thumbor if kind == "thumbor" else (lambda: self.start_osprey([]))
                paths = [self.info_url(kind, p) for p in self.photos]
                self.measure("info on photos", who, start, paths, paths, "unique", rep=rep)

    # ---------- the report ----------

    def report(self, started):
        a = self.args
        lines = [f"# Issue 43 benchmarks: local sources, uploads, /info (store_bench.py) — {started}, {os.cpu_count()} cores, "
                 f"load at start {self.load_start}, at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
                 f"# osprey {os.path.relpath(a.osprey, ROOT) if os.path.abspath(a.osprey).startswith(ROOT + os.sep) else '(--osprey)'}; "
                 f"thumbor {a.thumbor_version}; wrk -t{a.wrk_threads} -c{a.connections} "
                 f"{a.duration} s per measured run after {a.warmup} s of warm-up, a fresh server per run, "
                 f"{a.reps} repetitions, order alternating",
                 f"# images: {len(getattr(self, 'local_names', []))} test images (local/origin), "
                 f"{len(getattr(self, 'upload_names', []))} (uploads); photos: {len(getattr(self, 'photos', []))} x 4000x3000 JPEG",
                 "", "| case | participant | rep | req/s | CPU ms/req | CPU cores | p50 ms | p99 ms | load1 | origin fetches | requests |",
                 "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in self.runs:
            lines.append(f"| {r['case']} | {r['participant']} | {r['rep'] + 1} | {r['rate']:.1f} | {r['cpu_ms_per_request']:.2f} | "
                         f"{r['cpu_cores']:.2f} | {r['p50_us'] / 1000:.1f} | {r['p99_us'] / 1000:.1f} | {r['load1']:.2f} | "
                         f"{r['origin_fetches']} | {r['requests']}{' INVALID' if r.get('invalid') else ''} |")
        lines += ["", "## Ratios (per repetition, then the median)", ""]
        for case, first, second, goal in (("local-source misses", "local (--local-root)", "nginx origin (http)", "local >= 1.0x"),
                                          ("upload POST", "osprey --upload", "thumbor 7.8 upload API", ""),
                                          ("info on photos", "osprey /info", "thumbor meta/", ""),
                                          ("info on photos", "osprey meta/", "thumbor meta/", "")):
            rates, cpus = [], []
            for rep in range(a.reps):
                x = next((r for r in self.runs if r["case"] == case and r["participant"] == first and r["rep"] == rep), None)
                y = next((r for r in self.runs if r["case"] == case and r["participant"] == second and r["rep"] == rep), None)
                if x and y and y["rate"] and x["cpu_ms_per_request"]:
                    rates.append(x["rate"] / y["rate"])
                    cpus.append(y["cpu_ms_per_request"] / x["cpu_ms_per_request"])
            if rates:
                lines.append(f"- {case}: {first} / {second}: rate {', '.join(f'{v:.2f}x' for v in rates)} -> median "
                             f"**{statistics.median(rates):.2f}x**; CPU per request {second} / {first}: median "
                             f"{statistics.median(cpus):.2f}x{f' (goal: {goal})' if goal else ''}")
        if self.bench.notes:
            lines += ["", "## Notes", ""] + [f"- {n}" for n in self.bench.notes]
        for path in a.include:
            with open(path) as f:
                lines += ["", f.read().rstrip()]
        text = "\n".join(lines) + "\n"
        print(text)
        if a.out_txt:
            with open(a.out_txt, "w") as f:
                f.write(text)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--osprey", required=True, help="the release osprey binary")
    p.add_argument("--thumbor", required=True, help="the thumbor executable of the virtualenv")
    p.add_argument("--thumbor-version", default="7.8.0")
    p.add_argument("--images", default=os.path.join(ROOT, "Tests", "Fixtures", "images"))
    p.add_argument("--photos", default=None, help="the 4000x3000 photos (default Benchmarks/.work/large, made when missing)")
    p.add_argument("--cores", type=int, default=os.cpu_count())
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--duration", type=int, default=10, help="seconds per measured run")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--connections", type=int, default=8)
    p.add_argument("--wrk-threads", type=int, default=1, help="1: the path lists are walked in order, never repeated")
    p.add_argument("--copies", type=int, default=300, help="hard links of each image for measured local/origin runs")
    p.add_argument("--warm-copies", type=int, default=20)
    p.add_argument("--include", action="append", default=[], help="a text file copied into the report (repeatable)")
    p.add_argument("--scratch", default=None)
    p.add_argument("--out-txt")
    a = p.parse_args()
    started = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    bench = StoreBench(a)
    bench.load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    try:
        bench.run()
    finally:
        if hasattr(bench, "origin"):
            bench.origin.stop()
        bench.report(started)
        sb.scratchfs.down(bench.scratch)


if __name__ == "__main__":
    sys.exit(main())
