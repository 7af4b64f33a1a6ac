#!/usr/bin/env python3
"""The one driver for every wall-time comparison: Osprey against itself at another commit, or
against a peer (thumbor 7.8, nginx static, moto, the Pillow script, the libvips limit). Each
participant runs once per round, the order rotating every round, and every figure is reported as
the per-round ratio to its baseline (median [min..max]), so that machine drift cancels.

  python3 Benchmarks/ab.py harness REV [--rounds 6] [SCENARIO...]
      OspreyBench scenarios (default 1 2) of this tree (B) against commit REV (A, built in a
      worktree under Benchmarks/.work/ab-REV), release builds, BENCH_REPS (3) each, with a 95%
      bootstrap interval of B/A. --a BIN / --b BIN: prebuilt binaries (B = a copy of A is an A/A
      run: the noise floor); --harness FILE... copies this tree's harness files into REV's worktree.
  python3 Benchmarks/ab.py cli NAME=BIN... [--peer PYTHON] [--limits OSPREYBENCH] [--floor] [--set small,large]
      scenario 8 (`bash Benchmarks/run.sh 8` runs it): `osprey prefetch` of each binary as a whole
      process from an nginx origin, against peer/peer.py and the in-process limits: rate, CPU, RSS.
  python3 Benchmarks/ab.py hits NAME=BIN... [--seconds 10]
      scenario 9's memory hits under wrk, each `osprey serve` against nginx serving the same bytes.
  python3 Benchmarks/ab.py miss-cpu --osprey "NAME=BIN [serve flags]"... [--thumbor THUMBOR]
      scenario 9's misses (a new URL per request): each participant's CPU per answer, by thread.
  python3 Benchmarks/ab.py server --osprey BIN --thumbor THUMBOR --ospreybench BIN --large DIR
      scenario 9 (server/scenario9.py; `bash Benchmarks/run.sh 9` runs it).
  python3 Benchmarks/ab.py store --osprey BIN --thumbor THUMBOR
      local sources, uploads and /info against the origin and thumbor (server/store.py).
  python3 Benchmarks/ab.py s3 --osprey BIN
      s3:// sources and the result store against the origin and the disk cache (server/s3.py).
  python3 Benchmarks/ab.py gallery BENCH URLS [--naive] [--baseline BIN]
      GTK grid scrolling, p99 frame times against solid cells (Benchmarks/gallery_scroll.sh runs it).
  python3 Benchmarks/ab.py playback BENCH FILE... [--seconds 10] [--buffer 8]
      animated playback on a GTK target (Benchmarks/playback.sh runs it under its own Xvfb).
  python3 Benchmarks/ab.py scratch up PARENT | down DIR
      a fresh ext4 for a run's scratch files (what run.sh uses; see scratch_up).

Every comparison takes --rounds, --out-txt and --out-json. Environment: OSPREY_TESTDATA (default
Tests/Fixtures/images); the photos (--set large, --large) come from Benchmarks/run.sh
(Benchmarks/.work/large).
"""
import argparse
import glob
import json
import os
import shutil
import statistics as st
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks", "server"))
import servers as sv  # noqa: E402

SMALL = os.path.abspath(os.environ.get("OSPREY_TESTDATA") or os.path.join(ROOT, "Tests", "Fixtures", "images"))
LARGE = os.path.join(ROOT, "Benchmarks", ".work", "large")


from comparison import bootstrap, images, interleave, ratios, report, scratch_down, scratch_up, spread  # noqa: E402


# MARK: OspreyBench scenarios of two commits

def harness(a):
    work = os.path.join(ROOT, "Benchmarks", ".work")
    base = a.base_dir or os.path.join(work, f"ab-{a.rev}")
    out = a.out or os.path.join(work, "ab-out")
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, "*.json")):
        os.remove(old)
    if not a.a and not os.path.isdir(base):
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", base, a.rev], check=True, stdout=subprocess.DEVNULL)
        if os.path.exists(os.path.join(ROOT, "Package.resolved")):
            shutil.copy(os.path.join(ROOT, "Package.resolved"), base)
    if not a.a:
        for name in a.harness:
            shutil.copy(os.path.join(ROOT, name), os.path.join(base, name))
    build = ["swift", "build", "-c", "release", "--product", "OspreyBench"]
    if not a.b:
        subprocess.run(build, cwd=os.path.join(ROOT, "Benchmarks"), check=True, stdout=subprocess.DEVNULL)
    if not a.a:
        subprocess.run(build, cwd=os.path.join(base, "Benchmarks"), check=True, stdout=subprocess.DEVNULL)
    sides = {"A": a.a or os.path.join(base, "Benchmarks/.build/release/OspreyBench"),
             "B": a.b or os.path.join(ROOT, "Benchmarks/.build/release/OspreyBench")}
    scratch = tempfile.mkdtemp(prefix="osprey-ab.", dir="/var/tmp")

    def measure(case, side, r):
        env = dict(os.environ, VIPS_CONCURRENCY="1", BENCH_REPS=os.environ.get("BENCH_REPS", "3"), OSPREY_BENCH_TMP=scratch,
                   BENCH_JSON=os.path.join(out, f"{side}-{case}-{r}.json"), OSPREY_TESTDATA=SMALL)
        subprocess.run([sides[side], case], env=env, check=True, stdout=subprocess.DEVNULL)
        return dict(rate=1.0)
    try:
        interleave(a.rounds, [(s, ["A", "B"]) for s in a.scenarios or ["1", "2"]], measure)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    rows = {}
    for s in a.scenarios or ["1", "2"]:
        for r in range(a.rounds):
            both = [{(f["name"], f.get("baseline")): (f["median"], f["unit"]) for f in json.load(open(os.path.join(out, f"{side}-{s}-{r}.json")))["figures"]}
                    for side in "AB"]
            for key, (b, unit) in both[1].items():
                if key in both[0] and both[0][key][0]:
                    row = rows.setdefault((s, key), ([], [], [], unit))
                    row[0].append(both[0][key][0]), row[1].append(b), row[2].append(b / both[0][key][0])
    print(f"| scenario | figure | A ({a.rev}) median | B median | unit | B/A median [min..max] | 95% interval | rounds |")
    print("|---|---|---|---|---|---|---|---|")
    for (s, (name, _)), (av, bv, ratio, unit) in sorted(rows.items(), key=lambda i: (i[0][0], i[0][1][0], i[0][1][1] or "")):
        lo, hi = bootstrap(ratio)
        print(f"| {s} | {name} | {st.median(av):.4g} | {st.median(bv):.4g} | {unit} | {spread(ratio, '{:.3f}')} | {lo:.3f}..{hi:.3f} | {len(ratio)} |")


# MARK: whole CLI processes (scenario 8)

def cli(a):
    """`osprey prefetch` as a user runs it, a whole process, from an nginx origin, against the Python
    peer as a whole process and (--limits) the same image work in process: the CLI's decoder and
    serializer (the limit) and stock libvips, as imgproxy runs it. Every participant does the same
    files (those stock libvips can thumbnail); --floor adds the CLI over as many URLs of the
    smallest test image, whose peak RSS is the CLI's own floor."""
    sides = dict(b.split("=", 1) for b in a.binaries)
    first = list(sides)[0]
    extra = (["peer.py"] if a.peer else []) + (["limit", "stock libvips"] if a.limits else []) + (["floor"] if a.floor else [])
    sets = {name: (SMALL if name == "small" else LARGE) for name in a.set.split(",")}
    files = {}
    for name, directory in sets.items():
        files[name] = images(directory, skip=())
        if a.limits:
            probe = subprocess.run([a.limits, "limit8", "stock", "1", "1", *(os.path.join(directory, f) for f in files[name])],
                                   capture_output=True, text=True, check=True)
            left_out = {os.path.basename(f) for f in json.loads(probe.stdout.splitlines()[-1])["failed"]}
            files[name] = [f for f in files[name] if f not in left_out]
    counts = {name: a.urls or (420 if name == "small" else 96) for name in sets}
    smallest = min(images(SMALL), key=lambda n: os.path.getsize(os.path.join(SMALL, n)))
    scratch = scratch_up(a.scratch, "osprey-cli-ab.")
    nginx = sv.Nginx(scratch, "nginx", f"        location /small/ {{ alias {SMALL}/; }}\n        location /large/ {{ alias {LARGE}/; }}",
                     f"/small/{smallest}")
    warmed = set()

    def run(case, name, tag, count):
        if name in ("limit", "stock libvips"):
            copies = str(-(-count // len(files[case])))
            out = subprocess.run([a.limits, "limit8", "cli" if name == "limit" else "stock", str(os.cpu_count()), copies,
                                  *(os.path.join(sets[case], f) for f in files[case])], capture_output=True, text=True, check=True,
                                 env=dict(os.environ, VIPS_CONCURRENCY="1"))
            result = json.loads(out.stdout.splitlines()[-1])
            return dict(rate=result["images_per_s"], cpu_ms=result["cpu_ms"])
        cache = tempfile.mkdtemp(dir=scratch)
        names = [smallest] if name == "floor" else files[case]
        where = "small" if name == "floor" else case
        listing = os.path.join(cache, "urls.txt")
        with open(listing, "w") as f:
            f.write("".join(f"http://127.0.0.1:{nginx.port}/{where}/{names[i % len(names)]}?r={tag}-{i}\n" for i in range(count)))
        if name == "peer.py":
            argv = [a.peer, os.path.join(ROOT, "Benchmarks", "peer", "peer.py"), "--urls", listing, "--out", os.path.join(cache, "c"), "--workers", "4"]
        else:
            argv = [sides.get(name, sides[first]), "prefetch", "--input", listing, "--concurrency", "4", "--process", "thumbnail:256,format:jpeg:80",
                    "--cache-dir", os.path.join(cache, "c")]
        env = dict(os.environ)
        env.pop("VIPS_CONCURRENCY", None)  # a user's shell
        start = time.monotonic()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.monotonic() - start
        shutil.rmtree(cache, ignore_errors=True)
        if status != 0:
            raise RuntimeError(f"{argv[0]} exited with status {status}")
        return dict(rate=count / seconds, cpu_ms=(usage.ru_utime + usage.ru_stime) / count * 1000, peak_rss_mb=usage.ru_maxrss / 1024)

    def measure(case, name, r):
        if (case, name) not in warmed:  # page cache, nginx, the binaries, the interpreter: not counted
            warmed.add((case, name))
            run(case, name, f"warm-{name}", counts[case] // 4 + 1)
        os.sync()  # the previous participant's files written back, not charged to this one
        return run(case, name, f"{name}-{r}", counts[case])
    try:
        runs = interleave(a.rounds, [(name, list(sides) + [x for x in extra if x != "floor" or name != "small"]) for name in sets], measure)
    finally:
        nginx.stop()
        scratch_down(scratch)
    goals = {("small", "limit"): 0.85, ("large", "limit"): 0.85, ("small", "peer.py"): 1.0, ("large", "peer.py"): 2.5,
             ("large", "stock libvips"): 0.85}
    pairs = [(s, first, b, goals.get((s, b))) for s in sets for b in list(sides)[1:] + [x for x in extra if x != "floor"]]
    rss = []
    for s in sets:
        for name in list(sides) + extra:
            values = [r["peak_rss_mb"] for r in runs if r["case"] == s and r["participant"] == name and "peak_rss_mb" in r]
            if values:
                rss.append(f"{s}: peak RSS {name} {spread(values, '{:.0f}')} MB")
        floor = {r["round"]: r["peak_rss_mb"] for r in runs if r["case"] == s and r["participant"] == "floor"}
        over = [r["peak_rss_mb"] - floor[r["round"]] for r in runs if r["case"] == s and r["participant"] == first and r["round"] in floor]
        if over:
            rss.append(f"{s}: {first}'s peak RSS over the CLI's floor ({smallest} × {counts[s]}): {spread(over, '{:.1f}')} MB (goal < 48 MB)")
    report(f"Scenario 8: osprey prefetch --concurrency 4 --process thumbnail:256,format:jpeg:80, whole processes; "
           + ", ".join(f"{s}: {len(files[s])} files, {counts[s]} URLs" for s in sets), runs, pairs,
           out_txt=a.out_txt, out_json=a.out_json, extra=rss)


# MARK: server memory hits against nginx static

def hits(a):
    scratch = scratch_up("/var/tmp", "osprey-hits-ab.")
    names = [n for n in images(SMALL) if n.rsplit(".", 1)[-1] in ("jpg", "png", "webp")]
    origin = sv.Nginx(scratch, "origin", f"        location ~ ^/[^/]+/small/(.+)$ {{ alias {SMALL}/$1; }}", f"/p/small/{names[0]}")
    paths = [f"/unsafe/fit-in/512x512/filters:quality(80):format(jpeg)/http://127.0.0.1:{origin.port}/fixed/small/{n}" for n in names]
    static = os.path.join(scratch, "static")
    os.makedirs(static)
    started = {}
    try:
        for label, binary in (b.split("=", 1) for b in a.binaries):
            server = started[label] = sv.osprey(binary, scratch, os.path.join(scratch, "cache-" + label))
            for path, name in zip(paths, names):
                status, _, body = server.get(path)
                if status == 200 and len(started) == 1:
                    with open(os.path.join(static, name + ".jpg"), "wb") as f:
                        f.write(body)
        started["nginx"] = sv.Nginx(scratch, "static", f"        location /s/ {{ alias {static}/; }}", f"/s/{names[0]}.jpg", workers=os.cpu_count())
        static_paths = [f"/s/{n}" for n in sorted(os.listdir(static))]

        def measure(case, label, r):
            return sv.wrk(started[label], static_paths if label == "nginx" else paths, "fixed", a.seconds, scratch)
        runs = interleave(a.rounds, [("memory hits", list(started))], measure)
    finally:
        for server in started.values():
            server.stop()
        origin.stop()
        scratch_down(scratch)
    labels = [l for l in started if l != "nginx"]
    report("osprey serve memory hits against nginx static", runs,
           [("memory hits", l, "nginx", None) for l in labels] + [("memory hits", l, labels[0], None) for l in labels[1:]],
           out_txt=a.out_txt, out_json=a.out_json)


# MARK: server misses, CPU per answer by thread

def miss_cpu(a):
    scratch = scratch_up("/var/tmp", "osprey-miss-cpu.")
    files = images(SMALL)
    origin = sv.Nginx(scratch, "origin", f"        location ~ ^/[^/]+/small/(.+)$ {{ alias {SMALL}/$1; }}", f"/p/small/{files[0]}", access_log=True)
    participants = dict(x.split("=", 1) for x in a.osprey)
    if a.thumbor:
        participants["thumbor"] = None
    by_thread = []

    def measure(fmt, label, r):
        data = os.path.join(scratch, f"data-{r}-{fmt}-{label}")
        words = (participants[label] or "").split()
        server = sv.osprey(words[0], scratch, data, *words[1:]) if words else sv.thumbor(a.thumbor, scratch, data, os.cpu_count())
        paths = [f"/unsafe/fit-in/512x512/filters:quality(80):format({fmt})/http://127.0.0.1:{origin.port}/{{u}}/small/{n}" for n in files]
        try:
            sv.wrk(server, paths, "unique", a.warmup, scratch, connections=a.connections, check=True)
            before = {t: sv.cpu_seconds(server.pid, t) for t in os.listdir(f"/proc/{server.pid}/task")}
            result = sv.wrk(server, paths, "unique", a.seconds, scratch, connections=a.connections, check=True, origin=origin)
            threads = {}
            for t, cpu in before.items():
                try:
                    name = open(f"/proc/{server.pid}/task/{t}/comm").read().strip()
                    threads[name] = threads.get(name, 0) + (sv.cpu_seconds(server.pid, t) - cpu) * 1000 / max(result["requests"], 1)
                except OSError:
                    pass
            by_thread.append(f"round {r + 1} {fmt} {label} CPU ms per answer by thread: "
                             + ", ".join(f"{k} {v:.2f}" for k, v in sorted(threads.items(), key=lambda x: -x[1]) if v > 0))
        finally:
            server.stop()
        return result
    try:
        runs = interleave(a.rounds, [(fmt, list(participants)) for fmt in a.formats.split(",")], measure)
    finally:
        origin.stop()
        scratch_down(scratch)
    first = list(participants)[0]
    report("osprey serve misses, CPU per answer", runs, [(f, p, first, None) for f in a.formats.split(",") for p in list(participants)[1:]],
           out_txt=a.out_txt, out_json=a.out_json, extra=by_thread)


# MARK: GTK grid scrolling (frame times from the frame clock)

def gallery(a):
    """GalleryScrollBench's modes under Xvfb over the same URL list: Osprey against solid-colour cells
    (the floor), cell-sized textures decoded beforehand (drawing alone) and, with --naive, the naive
    way (`gdk_texture_new_from_bytes` in bind, minutes per run); p99 frame time ratios (lower is
    better). --baseline BIN adds an earlier build's osprey mode; --plain the osprey mode without its
    spinner and fade (GALLERY_BENCH_PLAIN=1). Benchmarks/gallery_scroll.sh makes the images, the URL
    list and the origin, then calls this."""
    modes = {"solid": (a.bench, "solid", ""), "osprey": (a.bench, "osprey", ""), "decoded": (a.bench, "decoded", "")}
    if a.baseline:
        modes["osprey-base"] = (a.baseline, "osprey", "")
    if a.plain:
        modes["osprey-plain"] = (a.bench, "osprey", "1")
    if a.naive:
        modes["naive"] = (a.bench, "naive", "")

    def measure(case, label, r):
        binary, mode, plain = modes[label]
        env = dict(os.environ, GDK_BACKEND="x11", GSK_RENDERER="cairo", GSETTINGS_BACKEND="memory", NO_AT_BRIDGE="1", GALLERY_BENCH_PLAIN=plain)
        out = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x1024x24 -nolisten tcp", binary, mode, a.urls, str(a.speed)],
                             capture_output=True, text=True, env=env)
        line = next((l for l in reversed(out.stdout.splitlines()) if l.startswith("{")), None)
        if line is None:
            raise RuntimeError(f"{label} printed no result: {out.stderr[-2000:]}")
        result = json.loads(line)
        return dict(result, rate=1000 / result["p99_ms"], cpu_ms=result["main_cpu_ms"])
    runs = interleave(a.rounds, [("scrolling", list(modes))], measure)
    report("Gallery scrolling: p99 frame time against solid-colour cells", runs,
           [("scrolling", m, "solid", 1.25 if m == "osprey" else None) for m in modes if m != "solid"]
           + ([("scrolling", "osprey", "naive", None)] if a.naive else []), out_txt=a.out_txt, out_json=a.out_json, key="p99_ms",
           extra=[f"{r['participant']} round {r['round'] + 1}: p50 {r['p50_ms']:.1f} p99 {r['p99_ms']:.1f} max {r['max_ms']:.1f} ms, "
                  f"peak RSS {r['peak_rss_mb']:.0f} MB, main thread CPU {r['main_cpu_ms'] / 1000:.2f} s (waiting "
                  f"{r['main_waiting_ms'] / 1000:.2f} s), origin requests before the first scroll {r.get('downloads_before_scroll', -1)}"
                  for r in runs])


# MARK: animated playback on a GTK target

def playback(a):
    """AnimationPlaybackBench in a fresh process per run (a display set, as playback.sh does): each file
    played decoded whole with the bounded buffer (`bounded`), with every frame held (`all`) and decoded
    on demand with the bounded buffer (`ondemand`); CPU per second of playback and peak RSS against
    `all` (lower is better), and each run's frame-delay figures."""
    modes = {"bounded": (str(a.buffer), "whole"), "all": ("all", "whole"), "ondemand": (str(a.buffer), "ondemand")}

    files = {os.path.basename(f): f for f in a.files}

    def measure(case, mode, r):
        out = subprocess.run([a.bench, files[case], str(a.seconds), *modes[mode]], capture_output=True, text=True, check=True)
        result = json.loads(next(l for l in reversed(out.stdout.splitlines()) if l.startswith("{")))
        return dict(result, rate=1 / max(result["cpu_per_s"], 1e-9))
    runs = interleave(a.rounds, [(f, list(modes)) for f in files], measure)
    keys = ("tick_ms", "frames_timed", "err_median_ms", "abs_err_p95_ms", "abs_err_max_ms", "within_tick", "cpu_per_s",
            "peak_rss_mb", "rss_end_mb", "buffer_peak", "textures_made")
    report("Animated playback: CPU per second of playback against every frame held", runs,
           [(f, m, "all", None) for f in files for m in ("bounded", "ondemand")], key="cpu_per_s", out_txt=a.out_txt, out_json=a.out_json,
           extra=[f"{f} {m}/all peak RSS: {spread(ratios(runs, f, m, 'all', 'peak_rss_mb'), '{:.3f}')}"
                  for f in files for m in ("bounded", "ondemand")]
           + [f"{r['case']} {r['participant']} round {r['round'] + 1}: " + " ".join(f"{k} {r[k]}" for k in keys if k in r)
              for r in runs])


# MARK: scenario definitions in server/ (scenario 9, store, s3)

def scenario(module):
    def run(a):
        scratch = scratch_up(a.scratch, f"osprey-{module}.")
        definition = __import__(module).Scenario(a, scratch)
        try:
            runs = interleave(a.rounds, definition.cases, definition.measure)
        finally:
            definition.close()
            scratch_down(scratch)
        report(definition.title, runs, definition.pairs, definition.notes, a.out_txt, a.out_json)
    return run


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="mode", required=True)
    modes = {}

    def mode(name, function, rounds):
        modes[name] = function
        m = sub.add_parser(name)
        m.add_argument("--rounds", "--reps", type=int, default=rounds)
        m.add_argument("--out-txt")
        m.add_argument("--out-json")
        m.add_argument("--scratch", default=tempfile.gettempdir(), help="parent of the scratch file system")
        return m
    h = mode("harness", harness, 6)
    h.add_argument("rev")
    h.add_argument("scenarios", nargs="*")
    h.add_argument("--a", help="prebuilt binary as A (REV only labels the table)")
    h.add_argument("--b", help="prebuilt binary as B")
    h.add_argument("--harness", nargs="*", default=[], help="harness files copied into REV's worktree")
    h.add_argument("--base-dir", help="an existing checkout of REV")
    h.add_argument("--out", help="JSON per run (default Benchmarks/.work/ab-out)")
    c = mode("cli", cli, 8)
    c.add_argument("binaries", nargs="+", help="NAME=BINARY")
    c.add_argument("--peer", help="the Python of the peer's virtualenv (adds peer/peer.py as a participant)")
    c.add_argument("--limits", help="the release OspreyBench (adds the in-process limit and stock libvips)")
    c.add_argument("--floor", action="store_true", help="adds the first binary over the smallest test image (its RSS floor)")
    c.add_argument("--set", default="small", help="small (the test images), large (the photos) or small,large")
    c.add_argument("--urls", type=int, help="URLs per run (default 420 small, 96 large)")
    s = mode("hits", hits, 5)
    s.add_argument("binaries", nargs="+", help="NAME=BINARY")
    s.add_argument("--seconds", type=int, default=10)
    m = mode("miss-cpu", miss_cpu, 3)
    m.add_argument("--osprey", action="append", default=[], help="NAME=BINARY [serve flags...] (repeatable)")
    m.add_argument("--thumbor", help="thumbor executable of the virtualenv (adds thumbor as a participant)")
    m.add_argument("--formats", default="webp,jpeg")
    m.add_argument("--seconds", type=int, default=8)
    m.add_argument("--warmup", type=int, default=3)
    m.add_argument("--connections", type=int, default=8)
    g = mode("gallery", gallery, 2)
    g.add_argument("bench", help="the GalleryScrollBench binary")
    g.add_argument("urls", help="the URL list")
    g.add_argument("--speed", type=int, default=60, help="pixels per frame")
    g.add_argument("--naive", action="store_true")
    g.add_argument("--plain", action="store_true")
    g.add_argument("--baseline", help="an earlier GalleryScrollBench build (its osprey mode as osprey-base)")
    y = mode("playback", playback, 3)
    y.add_argument("bench", help="the AnimationPlaybackBench binary")
    y.add_argument("files", nargs="+", help="animated images")
    y.add_argument("--seconds", type=int, default=10, help="frame-clock seconds per run")
    y.add_argument("--buffer", type=int, default=8, help="frames of the bounded buffer")
    for name, module in (("server", "scenario9"), ("store", "store"), ("s3", "s3")):
        __import__(module).arguments(mode(name, scenario(module), 3))
    if len(sys.argv) > 2 and sys.argv[1] == "scratch":
        print(scratch_up(sys.argv[3]) if sys.argv[2] == "up" else scratch_down(sys.argv[3]) or "")
        return
    a = p.parse_args()
    modes[a.mode](a)


if __name__ == "__main__":
    main()
