"""RSS under one kind of load: starts the soak's origin and `osprey serve` (optionally under a
wrapper such as heaptrack, or with an environment such as LD_PRELOAD), sends SOAK_MIX requests
(default: unique-URL misses that succeed) from RSS_CLIENTS clients for RSS_SECONDS, samples the
server's RSS every 5 s, then idles RSS_IDLE seconds and prints the curve, the slope of the last
half and the idle RSS.

    RSS_WRAP="heaptrack -o /tmp/ht" OSPREY_BIN=... python rss.py
    RSS_ENV="LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2" OSPREY_BIN=... python rss.py

Other knobs: RSS_ARGS (extra server arguments), SOAK_MEMORY_MB, SOAK_DISK_MB, SOAK_WORKERS, RSS_OUT (a JSON of the samples).
"""
import json
import os
import shlex
import shutil
import subprocess
import threading
import time

os.environ.setdefault("SOAK_MIX", "miss=1")
import load  # noqa: E402 (reads SOAK_MIX)
from sampler import proc_status  # noqa: E402
from soak import BIN, ROOT, start_origin  # noqa: E402 (the soak's binary, paths and origin)

E = os.environ.get
SECONDS = float(E("RSS_SECONDS", "180"))
CLIENTS = int(E("RSS_CLIENTS", "6"))
IDLE = float(E("RSS_IDLE", "20"))
WORK = E("RSS_WORK", os.path.join(ROOT, "Benchmarks/.work/rss"))


def rss_mb(pid):
    return proc_status(pid)[0]


def server_pid(root):
    """The process running BIN: `root` or one of its descendants (a wrapper's child)."""
    target = os.path.realpath(BIN)
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == target:
                return pid
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                todo += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return None


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    origin, origin_port = start_origin()
    env = dict(os.environ)
    for item in shlex.split(E("RSS_ENV", "")):
        key, value = item.split("=", 1)
        env[key] = value
    args = shlex.split(E("RSS_WRAP", "")) + [
        BIN, "serve", "--port", "0", "--thumbor-key", load.THUMBOR_KEY, "--imgproxy-key", load.IMGPROXY_KEY.hex(),
        "--imgproxy-salt", load.IMGPROXY_SALT.hex(), "--allow-loopback-sources", "--cache-dir", os.path.join(WORK, "cache"),
        "--disk-cache-mb", E("SOAK_DISK_MB", "32"), "--memory-cache-mb", E("SOAK_MEMORY_MB", "64"),
        "--workers", E("SOAK_WORKERS", "4"), "--queue", "64", "--download-timeout", "8", "--request-timeout", "30",
    ] + shlex.split(E("RSS_ARGS", ""))
    server = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(os.path.join(WORK, "server.log"), "w"), text=True, env=env)
    while True:
        line = server.stdout.readline()
        if not line:
            raise SystemExit("rss: the server did not start")
        if "listening on" in line:
            break
    port = int(line.strip().rsplit(":", 1)[1])
    threading.Thread(target=lambda: [None for _ in server.stdout], daemon=True).start()
    pid = server_pid(server.pid)
    try:
        measure(port, origin_port, pid, args)
    finally:
        os.kill(pid, 9 if E("RSS_KILL") else 15)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
        origin.terminate()


def measure(port, origin_port, pid, args):
    mix = load.Mix(f"127.0.0.1:{origin_port}")
    stop = time.monotonic() + SECONDS
    counts = {}
    lock = threading.Lock()

    def client():
        while time.monotonic() < stop:
            kind, label, url, box = mix.draw()
            status, _, _, _ = load.fetch("127.0.0.1", port, url, 60)
            with lock:
                counts[status] = counts.get(status, 0) + 1

    threads = [threading.Thread(target=client, daemon=True) for _ in range(CLIENTS)]
    start = time.monotonic()
    samples = [(0.0, rss_mb(pid), 0, proc_status(pid)[1])]
    print(f"rss: pid {pid}, baseline {samples[0][1]:.1f} MiB", flush=True)
    for t in threads:
        t.start()
    while time.monotonic() < stop:
        time.sleep(5)
        with lock:
            done = sum(counts.values())
        rss, nthreads = proc_status(pid)
        samples.append((round(time.monotonic() - start, 1), round(rss, 1), done, nthreads))
        print(f"  t={samples[-1][0]:6.1f}s rss={rss:7.1f} MiB answers={done} threads={nthreads}", flush=True)
    for t in threads:
        t.join()
    time.sleep(IDLE)
    idle = rss_mb(pid)
    if E("RSS_SMAPS"):
        with open(f"/proc/{pid}/smaps") as f, open(E("RSS_SMAPS"), "w") as out:
            out.write(f.read())
    half = [s for s in samples if s[0] >= SECONDS / 2]
    n = len(half)
    mx = sum(s[0] for s in half) / n
    my = sum(s[1] for s in half) / n
    slope = sum((s[0] - mx) * (s[1] - my) for s in half) / max(1e-9, sum((s[0] - mx) ** 2 for s in half)) * 60
    answers = sum(counts.values())
    summary = {"statuses": {str(k): v for k, v in counts.items()}, "answers": answers, "baseline_mb": samples[0][1],
               "peak_mb": max(s[1] for s in samples), "slope_last_half_mb_per_min": round(slope, 2),
               "idle_mb": round(idle, 1), "mb_per_1000_answers": round((samples[-1][1] - samples[0][1]) / max(1, answers) * 1000, 2)}
    print("rss:", json.dumps(summary), flush=True)
    if E("RSS_OUT"):
        with open(E("RSS_OUT"), "w") as f:
            json.dump({"args": args, "env": E("RSS_ENV", ""), "summary": summary, "samples": samples}, f)


if __name__ == "__main__":
    main()
