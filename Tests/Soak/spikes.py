"""RSS of `osprey serve` under one kind of request at a time: for each kind given, a fresh server
(the soak's flags) behind the soak's origin, SPIKES_CLIENTS clients asking only that kind (unique
sizes) for SPIKES_SECONDS, RSS sampled every 50 ms, then SPIKES_IDLE seconds idle (the server
trims its heap once idle). Prints one JSON line per kind: answers by status, RSS at the start,
peak, at the end of the load and after the idle wait (MiB).

    OSPREY_BIN=Benchmarks/.build/release/osprey python Tests/Soak/spikes.py 'huge-chunked/{n}' bomb/bomb-jpeg.jpg miss

A kind is a fault path template of load.FAULTS ({n}: one of load.SMALL) or `miss` (the test images).
"""
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import load
from sampler import proc_status
from soak import BIN, ROOT, start_origin  # the soak's binary, paths and origin

E = os.environ.get
SECONDS = float(E("SPIKES_SECONDS", "25"))
CLIENTS = int(E("SPIKES_CLIENTS", "4"))
IDLE = float(E("SPIKES_IDLE", "12"))
WORK = os.path.join(ROOT, "Benchmarks/.work/spikes")


def run(kind, origin_port):
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    args = [BIN, "serve", "--port", "0", "--thumbor-key", load.THUMBOR_KEY, "--imgproxy-key", load.IMGPROXY_KEY.hex(),
            "--imgproxy-salt", load.IMGPROXY_SALT.hex(), "--allow-loopback-sources", "--cache-dir", os.path.join(WORK, "cache"),
            "--disk-cache-mb", "32", "--memory-cache-mb", "64", "--workers", "4", "--queue", "16",
            "--download-timeout", "4", "--request-timeout", "12"]
    server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(os.path.join(WORK, "server.log"), "w"), text=True)
    port = int(server.stdout.readline().strip().rsplit(":", 1)[1])
    mix = load.Mix(f"127.0.0.1:{origin_port}")
    for name in load.SMALL:
        load.fetch("127.0.0.1", port, mix.url("t", f"img/{name}", 50, 50), 30)
    time.sleep(1)
    start_mb = proc_status(server.pid)[0]
    stop = time.monotonic() + SECONDS
    counter, statuses, lock = [0], {}, threading.Lock()

    def client():
        while time.monotonic() < stop:
            with lock:
                counter[0] += 1
                c = counter[0]
            source = f"img/{load.IMAGES[c % len(load.IMAGES)]}" if kind == "miss" else kind.format(n=load.SMALL[c % len(load.SMALL)])
            status, _, _, _ = load.fetch("127.0.0.1", port, mix.url("ti"[c % 2], source, 64 + c % 300, 64 + (c // 300) % 300), 40)
            with lock:
                statuses[status] = statuses.get(status, 0) + 1

    threads = [threading.Thread(target=client, daemon=True) for _ in range(CLIENTS)]
    for t in threads:
        t.start()
    peak = start_mb
    while any(t.is_alive() for t in threads):
        peak = max(peak, proc_status(server.pid)[0])
        time.sleep(0.05)
    end_mb = proc_status(server.pid)[0]
    time.sleep(IDLE)
    idle_mb = proc_status(server.pid)[0]
    server.terminate()
    server.wait(30)
    print(json.dumps({"kind": kind, "statuses": statuses, "start_mb": round(start_mb, 1), "peak_mb": round(peak, 1),
                      "peak_over_start_mb": round(peak - start_mb, 1), "end_mb": round(end_mb, 1), "idle_mb": round(idle_mb, 1)}), flush=True)


def main():
    origin, origin_port = start_origin()
    try:
        for kind in sys.argv[1:]:
            run(kind, origin_port)
    finally:
        origin.terminate()


if __name__ == "__main__":
    main()
