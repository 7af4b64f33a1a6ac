"""Collateral failures of a misbehaving origin: good image requests to an origin that answers every other
request with twice the bytes its Content-Length says (the soak origin's /cl-small/), through `osprey serve`
builds in turn, rounds interleaved. A pooled connection that carries such left-over bytes, or that the origin
closed, fails the next request sent on it before any response; DataLoader sends such a request once more.

    python3 Benchmarks/soak/resend.py ROUNDS NAME=BINARY [NAME=BINARY...]

Per round and build: 8 clients for 20 s, alternating /cl-small/ and /img/ sources (unique URLs, fit-in
64x64); prints how many /img/ answers were not 200 and why.
Environment: OSPREY_TESTDATA (default ../shared/testdata/images from the repository root).
"""
import collections
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGES = os.environ.get("OSPREY_TESTDATA", os.path.join(ROOT, "..", "shared", "testdata", "images"))
def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
def wait(url, limit=30):
    end = time.time() + limit
    while time.time() < end:
        try:
            urllib.request.urlopen(url, timeout=2).read(); return
        except urllib.error.HTTPError:
            return
        except Exception:
            time.sleep(0.1)
    raise SystemExit("not ready: " + url)
def run(binary, seconds, tag):
    work = tempfile.mkdtemp(dir="/var/tmp")
    oport = free_port()
    origin = subprocess.Popen([sys.executable, os.path.join(ROOT, "Benchmarks/soak/origin.py"), IMAGES, work, str(oport)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=os.path.join(ROOT, "Benchmarks/soak"))
    sport = free_port()
    server = subprocess.Popen([binary, "serve", "--port", str(sport), "--allow-loopback-sources", "--cache-dir",
                               os.path.join(work, "cache"), "--workers", "4"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait(f"http://127.0.0.1:{oport}/img/hopper.jpg")
        wait(f"http://127.0.0.1:{sport}/health")
        counts = collections.Counter(); lock = threading.Lock(); reasons = collections.Counter()
        until = time.time() + seconds
        def client(k):
            i = 0
            while time.time() < until:
                i += 1
                kind = "cl-small" if i % 2 else "img"
                path = f"/{kind}/{tag}-{k}-{i}/hopper.jpg"
                url = f"http://127.0.0.1:{sport}/unsafe/fit-in/64x64/http://127.0.0.1:{oport}{path}"
                try:
                    status = urllib.request.urlopen(url, timeout=30).status; body = b""
                except urllib.error.HTTPError as e:
                    status = e.code; body = e.read()
                with lock:
                    counts[(kind, status)] += 1
                    if kind == "img" and status != 200: reasons[body[:80]] += 1
        threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
        [t.start() for t in threads]; [t.join() for t in threads]
        return counts, reasons
    finally:
        server.terminate(); origin.terminate(); server.wait(); origin.wait()
        subprocess.run(["rm", "-rf", work])
if len(sys.argv) < 3:
    sys.exit(__doc__)
sides = [a.split("=", 1) for a in sys.argv[2:]]
rounds = int(sys.argv[1])
total = {n: collections.Counter() for n, _ in sides}
for r in range(rounds):
    for name, binary in (sides if r % 2 == 0 else sides[::-1]):
        counts, reasons = run(binary, 20, f"{name}{r}")
        total[name].update(counts)
        img = sum(v for (k, s), v in counts.items() if k == "img"); bad = sum(v for (k, s), v in counts.items() if k == "img" and s != 200)
        print(f"round {r} {name}: img {img} answers, {bad} not 200; all {dict(counts)}; {dict(reasons)}", flush=True)
for name, _ in sides:
    c = total[name]
    img = sum(v for (k, s), v in c.items() if k == "img"); bad = sum(v for (k, s), v in c.items() if k == "img" and s != 200)
    print(f"{name}: {img} image requests, {bad} not 200 ({bad / max(img, 1) * 100:.2f}%); cl-small {dict((s, v) for (k, s), v in c.items() if k == 'cl-small')}")
