#!/usr/bin/env python3
"""Issue 60's benchmarks: object storage against the nginx origin and the disk cache.

1. source misses: the same images as `s3://bench/C/NAME` from moto's S3 server (signed, path-style)
   and as `http://…/img/NAME?c=C` from a loopback nginx origin (C: --copies distinct sources per
   image); every request a miss (each pass starts a fresh `osprey serve` with an empty cache
   directory); ratio origin-time / s3-time (>= 0.9 means the S3 path costs at most ~10% more), and
   the CPU per request (utime + stime from /proc) of Osprey and of the upstream (moto or nginx,
   which share the cores: moto's Python CPU is in the S3 time, not Osprey's);
2. result hits: a variant made by instance A with `--result-store`, asked from a fresh instance B
   (its caches empty: a result-store hit, no processing) against the same variant asked from A
   after a restart on the same `--cache-dir` (its memory empty: a disk-cache hit); ratio of the
   mean times.

    python3 Benchmarks/server/s3_bench.py --osprey .build/release/osprey [--reps 3] [--out-txt FILE]

Requests are sequential (one client): the figures are latencies, not throughput. moto is a Python
server, much slower per request than S3 or MinIO: the S3 figures are an upper bound on Osprey's
own cost. Needs nginx (apt: nginx-light) and the venv of scripts/s3-venv.sh (made if missing).
Not run in CI.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

import server_bench as sb  # the same directory

ROOT = os.path.abspath(os.path.join(sb.HERE, "..", ".."))
IMAGES = os.path.join(ROOT, "Tests", "Fixtures", "images")
NAMES = ("astronaut.png", "chelsea.png", "coffee.png", "hubble_deep_field.jpg", "motorcycle_left.png", "rocket.jpg",
         "camera.png", "hopper.jpg", "retina.jpg")
OPERATION = "rs:fit:512:512/q:80/f:jpg"


def cpu_seconds(pid, children=False):
    """utime + stime of `pid` (with its live children's: nginx's worker)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    if children:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            total += sum(cpu_seconds(int(child)) for child in f.read().split())
    return total


class S3Bench:
    def __init__(self, args):
        self.args = args
        self.scratch = tempfile.mkdtemp(prefix="osprey-s3-bench-")
        venv = subprocess.run(["bash", os.path.join(ROOT, "scripts", "s3-venv.sh")], check=True, capture_output=True,
                              text=True).stdout.strip()
        self.venv = venv
        self.moto_port = sb.free_port()
        env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="3")
        self.moto = subprocess.Popen([f"{venv}/bin/moto_server", "-H", "127.0.0.1", "-p", str(self.moto_port)], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while True:
            try:
                sb.http_get(f"http://127.0.0.1:{self.moto_port}/moto-api/", timeout=2)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.1)
        endpoint = f"http://127.0.0.1:{self.moto_port}"
        keys = json.loads(subprocess.run([f"{venv}/bin/python", os.path.join(ROOT, "Tests", "S3", "moto_setup.py"), endpoint,
                                          "bench", "results"], check=True, capture_output=True, text=True).stdout)
        self.env = dict(os.environ, AWS_ACCESS_KEY_ID=keys["accessKeyID"], AWS_SECRET_ACCESS_KEY=keys["secretAccessKey"])
        upload = ("import botocore.session,sys,os\n"
                  f"s=botocore.session.get_session().create_client('s3',endpoint_url='{endpoint}',region_name='us-east-1',"
                  f"aws_access_key_id='{keys['accessKeyID']}',aws_secret_access_key='{keys['secretAccessKey']}')\n"
                  f"for c in range({args.copies}):\n"
                  "    for n in sys.argv[2:]:\n"
                  "        s.put_object(Bucket='bench',Key=f'{c}/{n}',Body=open(os.path.join(sys.argv[1],n),'rb').read())\n")
        subprocess.run([f"{venv}/bin/python", "-c", upload, IMAGES, *NAMES], check=True)
        self.nginx = sb.Nginx(self.scratch, "origin", f"        location /img/ {{ alias {IMAGES}/; }}")
        self.nginx.wait(f"/img/{NAMES[0]}")
        self.s3_args = ["--s3-endpoint", endpoint, "--s3-path-style", "--allowed-source", "s3://bench/",
                        "--allowed-source", "127.0.0.1"]

    def start(self, cache_dir, extra=()):
        port = sb.free_port()
        argv = [self.args.osprey, "serve", "--host", "127.0.0.1", "--port", str(port), "--allow-loopback-sources",
                "--cache-dir", cache_dir, *self.s3_args, *extra]
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.scratch, "osprey.log"), "ab"),
                                   env=self.env)
        sb.wait_ready(f"http://127.0.0.1:{port}/health", process)
        return process, port

    def timed(self, process, port, paths, upstream=None):
        """Mean ms per request, Osprey's CPU ms per request and the upstream's (`upstream`: (pid, with
        children), moto or nginx) of `paths` asked one after another (all must be 200)."""
        cpu = cpu_seconds(process.pid)
        up = cpu_seconds(*upstream) if upstream else 0
        started = time.perf_counter()
        for path in paths:
            status, _, body = sb.http_get(f"http://127.0.0.1:{port}{path}")
            if status != 200:
                raise RuntimeError(f"{path}: {status} {body[:200]!r}")
        elapsed = time.perf_counter() - started
        up = cpu_seconds(*upstream) - up if upstream else 0
        n = len(paths)
        return 1000 * elapsed / n, 1000 * (cpu_seconds(process.pid) - cpu) / n, 1000 * up / n

    def fresh_dir(self, name):
        path = os.path.join(self.scratch, name)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path

    def misses(self):
        rows = {"s3": [], "origin": []}
        for rep in range(self.args.reps):
            for who in ("s3", "origin") if rep % 2 == 0 else ("origin", "s3"):
                process, port = self.start(self.fresh_dir(f"miss-{who}"))
                copies = range(self.args.copies)  # each copy a distinct source: every request a source miss
                if who == "s3":
                    paths = [f"/imgproxy/_/{OPERATION}/plain/s3://bench/{c}/{n}" for c in copies for n in NAMES]
                    upstream = (self.moto.pid, False)
                else:
                    base = f"http://127.0.0.1:{self.nginx.port}/img"
                    paths = [f"/imgproxy/_/{OPERATION}/plain/{base}/{n}%3Fc%3D{c}" for c in copies for n in NAMES]
                    upstream = (self.nginx.process.pid, True)
                rows[who].append(self.timed(process, port, paths, upstream))
                sb.stop(process)
        return rows

    def hits(self):
        rows = {"result_store": [], "disk": []}
        for rep in range(self.args.reps):
            prefix = f"s3://results/rep{rep}"
            paths = [f"/imgproxy/_/{OPERATION}/cb:{rep}/plain/s3://bench/{c}/{n}" for c in range(self.args.copies) for n in NAMES]
            made = self.fresh_dir("hits-a")
            a, port = self.start(made, ["--result-store", prefix])
            self.timed(a, port, paths)
            time.sleep(1)  # the background writes to the store, and the disk cache's
            sb.stop(a)
            b, port = self.start(self.fresh_dir("hits-b"), ["--result-store", prefix])
            rows["result_store"].append(self.timed(b, port, paths, (self.moto.pid, False)))
            sb.stop(b)
            a, port = self.start(made)
            rows["disk"].append(self.timed(a, port, paths))
            sb.stop(a)
        return rows

    def close(self):
        self.nginx.stop()
        sb.stop(self.moto)
        shutil.rmtree(self.scratch, ignore_errors=True)


def summary(rows):
    """Medians over reps of (ms, Osprey CPU ms, upstream CPU ms) per request."""
    return tuple(statistics.median(r[i] for r in rows) for i in range(3))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--osprey", required=True)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--copies", type=int, default=3, help="distinct sources per image and pass")
    parser.add_argument("--out-txt")
    args = parser.parse_args()
    bench = S3Bench(args)
    try:
        misses = bench.misses()
        hits = bench.hits()
    finally:
        bench.close()
    s3, origin = summary(misses["s3"]), summary(misses["origin"])
    store, disk = summary(hits["result_store"]), summary(hits["disk"])
    lines = [
        f"s3_bench.py, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {args.osprey}, {args.reps} reps, {len(NAMES)} images x "
        f"{args.copies} copies, operation {OPERATION}, sequential requests, medians over reps",
        f"miss from s3:// (moto):      {s3[0]:8.1f} ms/request, Osprey CPU {s3[1]:6.2f} ms/request, moto CPU {s3[2]:6.2f}",
        f"miss from the nginx origin:  {origin[0]:8.1f} ms/request, Osprey CPU {origin[1]:6.2f} ms/request, nginx CPU {origin[2]:6.2f}",
        f"ratio origin/s3 time: {origin[0] / s3[0]:.3f} (goal >= 0.9); Osprey CPU origin/s3: {origin[1] / s3[1]:.3f}",
        f"result-store hit (moto):     {store[0]:8.2f} ms/request, Osprey CPU {store[1]:6.2f} ms/request, moto CPU {store[2]:6.2f}",
        f"disk-cache hit:              {disk[0]:8.2f} ms/request, Osprey CPU {disk[1]:6.2f} ms/request",
        f"ratio disk/store time: {disk[0] / store[0]:.3f}",
        "raw (ms, cpu ms) per rep: " + json.dumps({"misses": misses, "hits": hits}),
    ]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out_txt:
        with open(args.out_txt, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
