"""Collateral failures of a misbehaving origin: good image requests to an origin that answers every other
request with twice the bytes its Content-Length says (the soak origin's /cl-small/), through `osprey serve`
builds in turn, rounds interleaved. A pooled connection that carries such left-over bytes, or that the origin
closed, fails the next request sent on it before any response; DataLoader sends such a request once more.

    Benchmarks/.work/soak/venv/bin/python Tests/Soak/resend.py ROUNDS NAME=BINARY [NAME=BINARY...]

(the soak's virtualenv, made by Tests/Soak/run.sh). Per round and build: a fresh server behind the
soak's origin, RESEND_CLIENTS clients (8) for RESEND_SECONDS (20), alternating /cl-small/ and /img/
sources (unique URLs, unsafe fit-in 64x64); prints how many /img/ answers were not 200 and why.
"""
import collections
import os
import shutil
import subprocess
import sys
import threading
import time

import load
from soak import ROOT, start_origin  # the soak's paths and origin

CLIENTS = int(os.environ.get("RESEND_CLIENTS", "8"))
SECONDS = float(os.environ.get("RESEND_SECONDS", "20"))
WORK = os.path.join(ROOT, "Benchmarks/.work/resend")


def run(binary, origin_port, tag):
    """Answers of one server by (source kind, status), and the reasons of the /img/ answers that are not 200."""
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    server = subprocess.Popen([binary, "serve", "--port", "0", "--allow-loopback-sources", "--workers", "4",
                               "--cache-dir", os.path.join(WORK, "cache")],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(server.stdout.readline().strip().rsplit(":", 1)[1])
        counts, reasons, lock = collections.Counter(), collections.Counter(), threading.Lock()
        until = time.monotonic() + SECONDS

        def client(k):
            i = 0
            while time.monotonic() < until:
                i += 1
                kind = "cl-small" if i % 2 else "img"
                url = f"/unsafe/fit-in/64x64/http://127.0.0.1:{origin_port}/{kind}/{tag}-{k}-{i}/hopper.jpg"
                status, _, body, _ = load.fetch("127.0.0.1", port, url, 30)
                with lock:
                    counts[(kind, status)] += 1
                    if kind == "img" and status != 200:
                        reasons[body[:80].decode(errors="replace")] += 1

        threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return counts, reasons
    finally:
        server.terminate()
        server.wait(30)


def image_answers(counts):
    """(all /img/ answers, those not 200)."""
    answers = sum(v for (kind, _), v in counts.items() if kind == "img")
    return answers, sum(v for (kind, status), v in counts.items() if kind == "img" and status != 200)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rounds, sides = int(sys.argv[1]), [a.split("=", 1) for a in sys.argv[2:]]
    origin, origin_port = start_origin()
    total = {name: collections.Counter() for name, _ in sides}
    try:
        for r in range(rounds):
            for name, binary in (sides if r % 2 == 0 else sides[::-1]):
                counts, reasons = run(binary, origin_port, f"{name}{r}")
                total[name].update(counts)
                answers, bad = image_answers(counts)
                print(f"round {r} {name}: img {answers} answers, {bad} not 200; all {dict(counts)}; {dict(reasons)}",
                      flush=True)
    finally:
        origin.terminate()
        origin.wait(30)
    for name, _ in sides:
        answers, bad = image_answers(total[name])
        cl_small = {status: v for (kind, status), v in total[name].items() if kind == "cl-small"}
        print(f"{name}: {answers} image requests, {bad} not 200 ({bad / max(answers, 1) * 100:.2f}%); cl-small {cl_small}")


if __name__ == "__main__":
    main()
