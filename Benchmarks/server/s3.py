"""Object storage as Benchmarks/ab.py runs it (`ab.py s3`): requests one after another (latencies,
not throughput), each measured run a fresh `osprey serve`.

1. source misses: the same images as `s3://bench/NAME` from moto's S3 server (signed, path-style)
   against `http://…/img/NAME` from a loopback nginx origin, every request a miss (an empty cache);
   the rate ratio s3/origin is origin time / s3 time (≥ 0.9: the S3 path costs at most ~10% more);
2. result hits: a variant made by instance A with `--result-store`, asked from a fresh instance B
   (caches empty: a result-store hit, no processing) against the same variant from A restarted on
   its `--cache-dir` (memory empty: a disk-cache hit).

moto is a Python server, much slower per request than S3 or MinIO: the S3 figures are an upper bound
on Osprey's own cost. Needs nginx and the venv of scripts/s3-venv.sh (made if missing)."""
import os
import shutil
import subprocess
import time

import servers as sv

NAMES = ("astronaut.png", "chelsea.png", "coffee.png", "hubble_deep_field.jpg", "motorcycle_left.png", "rocket.jpg",
         "camera.png", "hopper.jpg", "retina.jpg")
OPERATION = "rs:fit:512:512/q:80/f:jpg"
IMAGES = os.path.join(sv.ROOT, "Tests", "Fixtures", "images")


def arguments(p):
    p.add_argument("--osprey", required=True, help="the osprey binary")


class Scenario:
    title = f"Object storage: {len(NAMES)} images, {OPERATION}, sequential requests"
    cases = [("source misses", ["s3://", "nginx origin"]), ("result hits", ["result store", "disk cache"])]
    pairs = [("source misses", "s3://", "nginx origin", 0.9), ("result hits", "result store", "disk cache", None)]

    def __init__(self, a, scratch):
        self.a, self.scratch, self.notes, self.made = a, scratch, [], {}
        self.moto, endpoint, self.env, venv = sv.moto(scratch, ["bench", "results"])
        upload = ("import botocore.session,sys,os\n"
                  f"s=botocore.session.get_session().create_client('s3',endpoint_url='{endpoint}',region_name='us-east-1')\n"
                  "for n in sys.argv[2:]:\n"
                  "    s.put_object(Bucket='bench',Key=n,Body=open(os.path.join(sys.argv[1],n),'rb').read())\n")
        subprocess.run([f"{venv}/bin/python", "-c", upload, IMAGES, *NAMES], check=True, env=self.env)
        self.nginx = sv.Nginx(scratch, "origin", f"        location /img/ {{ alias {IMAGES}/; }}", f"/img/{NAMES[0]}")
        self.flags = ["--s3-endpoint", endpoint, "--s3-path-style", "--allowed-source", "s3://bench/", "--allowed-source", "127.0.0.1"]

    def start(self, cache, *extra):
        return sv.osprey(self.a.osprey, self.scratch, cache, *self.flags, *extra, env=self.env)

    def fresh(self, name):
        path = os.path.join(self.scratch, name)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path

    def timed(self, server, paths):
        try:
            return sv.sequential(server, paths)
        finally:
            server.stop()

    def measure(self, case, who, rnd):
        if case == "source misses":
            source = "s3://bench" if who == "s3://" else f"http://127.0.0.1:{self.nginx.port}/img"
            return self.timed(self.start(self.fresh(f"miss-{who[:2]}")), [f"/imgproxy/_/{OPERATION}/plain/{source}/{n}" for n in NAMES])
        store, paths = f"s3://results/round{rnd}", [f"/imgproxy/_/{OPERATION}/cb:{rnd}/plain/s3://bench/{n}" for n in NAMES]
        if rnd not in self.made:  # the round's variants, made by instance A
            self.made[rnd] = self.fresh(f"made-{rnd}")
            maker = self.start(self.made[rnd], "--result-store", store)
            sv.sequential(maker, paths)
            time.sleep(1)  # the background writes to the store and the disk cache
            maker.stop()
        if who == "result store":
            return self.timed(self.start(self.fresh("hits-b"), "--result-store", store), paths)
        return self.timed(self.start(self.made[rnd]), paths)

    def close(self):
        self.nginx.stop()
        self.moto.stop()
