"""The `store` phase of check_cluster.py: the result store in a shared bucket (S3_STORE=1 cluster).

Instance KILL_INSTANCE makes fresh variants (asked directly, not through nginx, so it is the one
that encodes them), then is SIGKILLed once its background writes have landed; every other
instance is then asked for the same variants directly and must answer them from the bucket:
the same bytes, 0 extra encodes and one `result_store` hit per variant (from /metrics). The killed
instance is restarted at the end.
"""
import collections
import os
import subprocess
import time

ENCODES = 'osprey_request_duration_seconds_count{phase="encode"}'
STORE_HITS = 'osprey_cache_hits_total{level="result_store"}'


def phase_store(names, ctx):
    """ctx: the check's helpers and settings (instances, kill, here, url_for, accepts, get, metrics,
    check_answer, report, fail)."""
    instances, kill = ctx["instances"], ctx["kill"]
    victim = instances[kill - 1]
    # Sizes no other phase uses, both grammars, two Accept classes.
    variants = [(n, size, index, cls) for n in names[:12] for index, size in ((1, (222, 111)), (4, (333, 222)))
                for cls in ("webp", "legacy")]
    made = {}
    before = ctx["metrics"](victim) or collections.Counter()
    for name, size, index, cls in variants:
        path = ctx["url_for"](name, size, index)
        status, headers, body = ctx["get"](victim, path, ctx["accepts"][cls])
        if not ctx["check_answer"](path, cls, name, size, status, headers, body):
            ctx["fail"](f"store: {path} from the victim: {status}")
        made[(path, cls)] = body
    after = ctx["metrics"](victim) or collections.Counter()
    encoded = after[ENCODES] - before[ENCODES]
    written, written_before = 0, None
    deadline = time.time() + 20
    while time.time() < deadline:  # the writes run in the background: wait until all landed
        m = ctx["metrics"](victim) or collections.Counter()
        written = m['osprey_result_store_total{outcome="written"}']
        if written >= len(made) or written == written_before:
            break
        written_before = written
        time.sleep(0.5)
    subprocess.run(["bash", os.path.join(ctx["here"], "cluster.sh"), "kill", str(kill)], check=True)
    rows = {}
    for i, url in enumerate(instances, 1):
        if i == kill:
            continue
        start = ctx["metrics"](url) or collections.Counter()
        same = 0
        for (path, cls), body in made.items():
            status, headers, answer = ctx["get"](url, path, ctx["accepts"][cls])
            same += status == 200 and answer == body
        end = ctx["metrics"](url) or collections.Counter()
        rows[f"instance {i}"] = {
            "variants": len(made), "same bytes": same, "extra encodes": end[ENCODES] - start[ENCODES],
            "result_store hits": end[STORE_HITS] - start[STORE_HITS],
        }
        if same != len(made) or end[ENCODES] != start[ENCODES]:
            ctx["fail"](f"store: instance {i} served {same} of {len(made)} identically with "
                        f"{end[ENCODES] - start[ENCODES]} encodes (expected all, 0)")
    subprocess.run(["bash", os.path.join(ctx["here"], "cluster.sh"), "start", str(kill)], check=True,
                   stdout=subprocess.DEVNULL)
    ctx["report"]["store"] = {
        "variants made by the victim": len(made), "victim encodes": encoded,
        "victim writes": written,
        "after SIGKILL": rows,
    }
