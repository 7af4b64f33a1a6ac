#!/usr/bin/env python3
"""Checks an Osprey cluster made by deploy/cluster.sh (run through deploy/check-cluster.sh).

Runs where a client of the cluster runs (`cluster.sh client python3 ...`), standard library only,
with `vipsheader` to decode the answers. Phases:

  1. correctness: SOURCES x 5 sizes x 3 Accept classes (thumbor and imgproxy grammars), each URL
     asked COPIES times by THREADS concurrent clients, every answer checked (200, Content-Type of
     the negotiated format, decodes at the requested size); origin fetches per source counted from
     the origin's access log, upstream requests per variant from nginx's log, variants processed
     from the instances' /metrics.
  2. failover: fresh variants under load, one instance SIGKILLed, then restarted; client errors,
     requests nginx retried away from the dead instance (= in flight on it), shares before/after,
     and that the restarted instance gets its sources back.
  3. throughput: fresh (uncached) variants through one instance vs the cluster, and cached
     answers from nginx (wrk when present); the nginx cache hit ratio over the whole run.
  4. uploads (deploy/check_uploads.py): images POSTed through nginx, the instance that took the
     first one SIGKILLed, every upload then served (original and a new variant) by nginx and each
     other instance; PUT and DELETE seen by all; the restarted instance serves the others' uploads.

Prints a report and exits 1 when a check fails. Environment from cluster.sh: LB_URL, SINGLE_URL,
ORIGIN_URL, INSTANCE_URLS, CLUSTER_DIR.
"""
import collections
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from check_store import phase_store
from check_uploads import phase_uploads

LB = os.environ["LB_URL"]
SINGLE = os.environ["SINGLE_URL"]
ORIGIN = os.environ["ORIGIN_URL"]
INSTANCES = os.environ["INSTANCE_URLS"].split()
DIR = os.environ["CLUSTER_DIR"]
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = int(os.environ.get("SOURCES", "100"))
COPIES = int(os.environ.get("COPIES", "2"))
THREADS = int(os.environ.get("THREADS", "32"))
KILL = int(os.environ.get("KILL_INSTANCE", "2"))
FAILOVER_SECONDS = float(os.environ.get("FAILOVER_SECONDS", "40"))
THROUGHPUT_SOURCES = int(os.environ.get("THROUGHPUT_SOURCES", "48"))

ACCEPTS = {
    "avif": "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8",  # Chrome
    "webp": "image/webp,*/*",                                                    # Safari 14-15 style
    "legacy": "image/png,image/*;q=0.8,*/*;q=0.5",                               # old browser
}
SIZES = [(64, 64), (120, 80), (200, 150), (320, 240), (480, 320)]
LOADERS = {"jpegload": "image/jpeg", "pngload": "image/png", "webpload": "image/webp", "heifload": "image/avif"}
failures = []
report = collections.OrderedDict()


def fail(msg):
    failures.append(msg)
    if len(failures) <= 20:
        print("FAIL:", msg, file=sys.stderr)


def source_list():
    names = sorted(os.listdir(os.path.join(os.environ.get("ORIGIN_DIR", os.path.join(DIR, "origin")), "img")))
    return names[:SOURCES]


def url_for(name, size, index):
    """thumbor for the first three sizes, imgproxy (plain) for the others."""
    src = f"{ORIGIN}/img/{name}"
    w, h = size
    if index < 3:
        return f"/unsafe/{w}x{h}/{src}"
    return f"/imgproxy/insecure/rs:fill:{w}:{h}:1/plain/{src}"  # enlarge: exact size


def get(base, path, accept, timeout=90):
    req = urllib.request.Request(base + path, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def decode(data):
    with tempfile.NamedTemporaryFile(dir=os.path.join(DIR, "tmp")) as f:
        f.write(data)
        f.flush()
        out = subprocess.run(["vipsheader", f.name], capture_output=True, text=True)
    m = re.search(r": (\d+)x(\d+) .*, (\w+load)", out.stdout)
    return (int(m.group(1)), int(m.group(2)), m.group(3)) if m else None


def expected_types(cls, name):
    if cls == "avif":
        return {"image/avif"}
    if cls == "webp":
        return {"image/webp"}
    return {"image/jpeg", "image/png"}  # PNG for a source with alpha


def check_answer(path, cls, name, size, status, headers, body):
    if status != 200:
        fail(f"{path} [{cls}]: status {status} {body[:200]!r}")
        return False
    ctype = headers.get("Content-Type", "")
    if ctype not in expected_types(cls, name):
        fail(f"{path} [{cls}]: Content-Type {ctype}")
        return False
    d = decode(body)
    if d is None:
        fail(f"{path} [{cls}]: does not decode")
        return False
    w, h, loader = d
    if (w, h) != size:
        fail(f"{path} [{cls}]: {w}x{h}, expected {size[0]}x{size[1]}")
        return False
    if LOADERS.get(loader) != ctype:
        fail(f"{path} [{cls}]: Content-Type {ctype} but the bytes are {loader}")
        return False
    if "Accept" not in headers.get("Vary", ""):
        fail(f"{path} [{cls}]: no Vary: Accept")
    return True


def metrics(instance):
    try:
        with urllib.request.urlopen(instance + "/metrics", timeout=5) as r:
            text = r.read().decode()
    except Exception:
        return None
    values = collections.Counter()
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.match(r'^(\w+)(\{[^}]*\})? ([0-9.e+-]+)$', line)
        if m:
            values[m.group(1) + (m.group(2) or "")] += float(m.group(3))
    return values


def origin_log():
    counts = collections.Counter()
    with open(os.path.join(DIR, "log", "origin-access.log")) as f:
        for line in f:
            m = re.search(r'"GET (/img/[^ ]+) ', line)
            if m:
                counts[m.group(1)] += 1
    return counts


LB_LINE = re.compile(r'^(\S+) (\d+) cache=(\S*) upstream="([^"]*)" upstream_status="([^"]*)" rt=(\S+) bytes=\d+ source="([^"]*)" accept=(\S+) uri="([^"]*)"')


def lb_log():
    rows = []
    with open(os.path.join(DIR, "log", "lb-access.log")) as f:
        for line in f:
            m = LB_LINE.match(line)
            if m:
                rows.append(dict(t=float(m.group(1)), status=int(m.group(2)), cache=m.group(3), upstream=m.group(4),
                                 ustatus=m.group(5), rt=float(m.group(6)), source=m.group(7), cls=m.group(8), uri=m.group(9)))
    return rows


def run_many(jobs, threads, fn):
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(fn, jobs))


# ---------------------------------------------------------------- phase 1: correctness
def phase_correctness(names):
    unique = [(name, size, i, cls) for name in names for i, size in enumerate(SIZES) for cls in ACCEPTS]
    random.Random(18).shuffle(unique)
    # each URL COPIES times in a row: concurrent clients ask for it at the same moment (a stampede
    # that proxy_cache_lock must turn into one upstream request)
    jobs = [job for job in unique for _ in range(COPIES)]
    ok = collections.Counter()

    def one(job):
        name, size, i, cls = job
        path = url_for(name, size, i)
        try:
            status, headers, body = get(LB, path, ACCEPTS[cls])
        except Exception as e:
            fail(f"{path} [{cls}]: {e}")
            return
        if check_answer(path, cls, name, size, status, headers, body):
            ok["ok"] += 1

    t0 = time.time()
    run_many(jobs, THREADS, one)
    elapsed = time.time() - t0
    origin = origin_log()
    per_source = collections.Counter(origin.get(f"/img/{n}", 0) for n in names)
    rows = [r for r in lb_log() if r["t"] >= t0 - 1]
    upstream_per_variant = collections.Counter()
    for r in rows:
        if r["cache"] in ("MISS", "EXPIRED", "UPDATING", "STALE", "BYPASS", ""):
            if r["upstream"] and r["upstream"] != "-":
                upstream_per_variant[(r["uri"], r["cls"])] += 1
    variants = len(names) * len(SIZES) * len(ACCEPTS)
    dist = collections.Counter(upstream_per_variant.values())
    per_instance = {}
    encodes = fetches = 0
    for inst in INSTANCES:
        m = metrics(inst) or {}
        e = int(m.get('osprey_request_duration_seconds_count{phase="encode"}', 0))
        o = int(m.get("osprey_origin_fetches_total", 0))
        per_instance[inst] = {"origin_fetches": o, "variants_processed": e,
                              "requests": int(sum(v for k, v in m.items() if k.startswith("osprey_requests_total")))}
        encodes += e
        fetches += o
    report["phase1"] = {
        "requests": len(jobs), "ok": ok["ok"], "seconds": round(elapsed, 1), "threads": THREADS,
        "sources": len(names), "variants": variants,
        "origin_fetches_per_source_histogram": dict(sorted(per_source.items())),
        "origin_fetches_total_log": sum(origin.values()),
        "upstream_requests_per_variant_histogram": dict(sorted(dist.items())),
        "variants_with_an_upstream_request": len(upstream_per_variant),
        "nginx_cache": hit_ratio(rows),
        "duplicate_origin_fetches": {k: v for k, v in origin.items() if v > 1},
        "instances": per_instance, "variants_processed_total_metrics": encodes, "origin_fetches_total_metrics": fetches,
    }
    if ok["ok"] != len(jobs):
        fail(f"phase 1: {len(jobs) - ok['ok']} of {len(jobs)} answers wrong")
    if set(per_source) != {1}:
        fail(f"phase 1: origin fetches per source {dict(per_source)} (expected exactly 1 each)")
    if dist and set(dist) != {1} or len(upstream_per_variant) != variants:
        fail(f"phase 1: upstream requests per variant {dict(dist)} over {len(upstream_per_variant)} variants (expected 1 each over {variants})")
    if encodes != variants:
        fail(f"phase 1: {encodes} variants processed by the instances (expected {variants})")


# ---------------------------------------------------------------- phase 2: SIGKILL under load
def phase_failover(names, how="kill"):
    """how: "kill" (SIGKILL) or "stop" (SIGTERM, the server's graceful shutdown)."""
    killed = INSTANCES[KILL - 1].split("//")[1]
    # fresh variants (not in any cache): sizes not used in phase 1, all Accept classes
    sizes = [(150, 150), (250, 100), (90, 60), (400, 300)] if how == "kill" else [(151, 151), (251, 101), (91, 61), (401, 301)]
    fresh = [(n, (w, h), 0 if k % 2 == 0 else 3, cls) for k, (w, h) in enumerate(sizes)
             for n in names for cls in ("webp", "legacy")]
    random.Random(7).shuffle(fresh)
    errors = []
    results = collections.Counter()
    stop = threading.Event()
    lock = threading.Lock()
    cursor = iter(fresh)

    def worker():
        while not stop.is_set():
            with lock:
                job = next(cursor, None)
            if job is None:
                return
            name, size, i, cls = job
            path = url_for(name, size, i)
            try:
                status, headers, body = get(LB, path, ACCEPTS[cls], timeout=60)
            except Exception as e:
                errors.append(f"{path}: {e}")
                continue
            if check_answer(path, cls, name, size, status, headers, body):
                results["ok"] += 1
            else:
                errors.append(f"{path}: status {status}")

    t0 = time.time()
    threads = [threading.Thread(target=worker) for _ in range(16)]
    for t in threads:
        t.start()
    time.sleep(4)
    t_kill = time.time()
    subprocess.run(["bash", os.path.join(HERE, "cluster.sh"), how, str(KILL)], check=True)
    t_killed = time.time()  # the signal was sent between t_kill and t_killed
    time.sleep(8)
    t_restart = time.time()
    subprocess.run(["bash", os.path.join(HERE, "cluster.sh"), "start", str(KILL)], check=True,
                   stdout=subprocess.DEVNULL)
    t_back = time.time()
    deadline = t0 + FAILOVER_SECONDS
    while any(t.is_alive() for t in threads) and time.time() < deadline:
        time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join()
    t_end = time.time()
    rows = [r for r in lb_log() if t0 - 0.5 <= r["t"] <= t_end + 1]

    def share(rs):
        c = collections.Counter()
        for r in rs:
            if r["upstream"] and r["cache"] != "HIT":
                c[r["upstream"].split(", ")[-1].split(" : ")[-1]] += 1
        return dict(c)

    retried = [r for r in rows if "," in r["upstream"] and killed in r["upstream"]]
    # in flight on it when it died: started (t - request_time) before the kill; the others are
    # nginx probing the dead instance again after fail_timeout (a refused connection, retried too)
    in_flight = [r for r in retried if r["t"] - r["rt"] <= t_killed]
    # after the restart: does the restarted instance get requests again (its sources come back)?
    time.sleep(4)  # > fail_timeout
    back = collections.Counter()
    rejoin_paths = [url_for(n, (77, 77) if how == "kill" else (78, 78), 0) for n in names]
    for p in rejoin_paths[:60]:
        status, headers, body = get(LB, p, ACCEPTS["webp"])
        back[headers.get("X-Osprey-Upstream", "?")] += 1
    report["phase2" if how == "kill" else "phase2_sigterm"] = {
        "signal": "SIGKILL" if how == "kill" else "SIGTERM", "killed": killed, "requests_ok": results["ok"], "client_errors": len(errors), "error_samples": errors[:5],
        "retried_away_from_killed_instance": len(retried),
        "of_which_in_flight_at_the_kill": len(in_flight),
        "of_which_probes_after_fail_timeout": len(retried) - len(in_flight),
        "retried_started_seconds_after_kill": [round(r["t"] - r["rt"] - t_kill, 2) for r in retried],
        "signal_sent_within_seconds": round(t_killed - t_kill, 2),
        "retried_samples": [f'{r["upstream"]} {r["ustatus"]} {r["uri"]}' for r in retried[:3]],
        "share_before_kill": share([r for r in rows if r["t"] < t_kill]),
        "share_while_dead": share([r for r in rows if t_kill <= r["t"] < t_restart]),
        "share_after_restart": share([r for r in rows if r["t"] >= t_back]),
        "restart_to_ready_seconds": round(t_back - t_restart, 1),
        "fresh_requests_after_rejoin_by_instance": dict(back),
        "origin_fetches_total_after": sum(origin_log().values()),
    }
    if errors:
        fail(f"phase 2 ({how}): {len(errors)} client errors while instance {KILL} was stopped")
    if not any(killed in k for k in back):
        fail(f"phase 2: the restarted instance {killed} gets no requests back")


# ---------------------------------------------------------------- phase 3: throughput and hit ratio
def hit_ratio(rows):
    statuses = collections.Counter(r["cache"] for r in rows)
    hits = statuses.get("HIT", 0)
    counted = sum(v for k, v in statuses.items() if k not in ("", "-"))
    return {"statuses": dict(statuses), "hit_ratio": round(hits / counted, 3) if counted else None}


def phase_throughput(names):
    report["nginx_cache_before_wrk"] = hit_ratio(lb_log())
    def timed(base, size):
        paths = [url_for(n, size, 0) for n in names[:THROUGHPUT_SOURCES]]

        def one(p):
            s, h, b = get(base, p, ACCEPTS["webp"])
            return s == 200
        t = time.time()
        ok = sum(run_many(paths, 16, one))
        dt = time.time() - t
        return {"requests": len(paths), "ok": ok, "seconds": round(dt, 2), "req_per_s": round(len(paths) / dt, 1)}

    report["phase3"] = {
        "uncached_one_instance (nginx -> instance 1, no cache)": timed(SINGLE, (210, 140)),
        "uncached_cluster (nginx cache MISS -> 3 instances)": timed(LB, (230, 150)),
    }
    if shutil.which("wrk"):
        hot = f"/unsafe/200x150/{ORIGIN}/img/{names[0]}"
        for label, base in (("cached_cluster_nginx_HIT", LB), ("one_instance_result_cache_hit", SINGLE)):
            out = subprocess.run(["wrk", "-t2", "-c16", "-d5s", "-H", "Accept: " + ACCEPTS["webp"], base + hot],
                                 capture_output=True, text=True).stdout
            m = re.search(r"Requests/sec:\s+([0-9.]+)", out)
            report["phase3"][label + " (wrk -c16 5s, req/s)"] = float(m.group(1)) if m else out[-300:]
    report["nginx_cache_whole_run"] = hit_ratio(lb_log())


def main():
    names = source_list()
    phases = sys.argv[1:] or ["correctness", "failover", "throughput", "uploads"]
    if "correctness" in phases:
        phase_correctness(names)
    if "failover" in phases:
        phase_failover(names)
    if "sigterm" in phases:
        phase_failover(names, "stop")
    if "throughput" in phases:
        phase_throughput(names)
    if "store" in phases:
        phase_store(names, {"instances": INSTANCES, "kill": KILL, "here": HERE, "url_for": url_for, "accepts": ACCEPTS,
                            "get": get, "metrics": metrics, "check_answer": check_answer, "report": report, "fail": fail})
    if "uploads" in phases:
        phase_uploads(names, os.environ.get("ORIGIN_DIR", os.path.join(DIR, "origin")), report, fail, decode)
    report["failures"] = len(failures)
    print(json.dumps(report, indent=1))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
