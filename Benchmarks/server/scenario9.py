"""Scenario 9 as Benchmarks/ab.py runs it (`ab.py server`, called by `bash Benchmarks/run.sh 9`):
`osprey serve` against thumbor 7.8 under wrk, both on one loopback nginx origin, the operation
`/unsafe/fit-in/512x512/filters:quality(80):format(jpeg|webp)/SOURCE`.

- misses: every request names a new source URL (a `{u}` token the origin ignores), so neither server
  answers from a cache; osprey against thumbor and against the in-process libvips limit of the same
  operation (`OspreyBench limit9`: vips_thumbnail_buffer + jpegsave/webpsave, as imgproxy runs it);
- hits: the same URLs again and again; osprey from its memory cache, and from its disk cache alone
  (a fresh process over the warmed cache with --memory-cache-mb 0), against nginx serving the same
  result bytes as static files (the ceiling for a cached answer); thumbor (no result storage) too.

Each measured run starts its server afresh and warms it up with an uncounted wrk run."""
import os
import shutil
import subprocess
import json

import servers as sv

OPERATION = "fit-in/512x512/filters:quality(80):format({fmt})"
GOALS = {("miss", "large", "thumbor"): 2.5, ("miss", "small", "thumbor"): 1.0, ("miss", "large", "libvips limit"): 0.8,
         ("miss", "small", "libvips limit"): 0.8, ("hit", "small", "nginx static"): 0.5, ("hit", "large", "nginx static"): 0.5}


def arguments(p):
    p.add_argument("--osprey", required=True, help="the release osprey binary")
    p.add_argument("--thumbor", required=True, help="the thumbor executable of the virtualenv")
    p.add_argument("--ospreybench", required=True, help="the release OspreyBench binary (libvips limit)")
    p.add_argument("--small", default=os.path.join(sv.ROOT, "Tests", "Fixtures", "images"), help="the test images")
    p.add_argument("--large", help="the 4000×3000 photos (Benchmarks/run.sh makes them)")
    p.add_argument("--duration", type=int, default=10, help="seconds per measured run")
    p.add_argument("--duration-large", type=int, default=15, help="seconds per miss run on the photos")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--connections", type=int, default=8)
    p.add_argument("--wrk-threads", type=int, default=2)
    p.add_argument("--cases", default="miss,hit")
    p.add_argument("--formats", default="jpeg,webp")
    p.add_argument("--hit-formats", default="jpeg")
    p.add_argument("--limit-copies", default="20,6", help="copies of each file per limit run: test images, photos")


class Scenario:
    def __init__(self, a, scratch):
        self.a, self.scratch, self.notes, self.prepared = a, scratch, [], {}
        self.title = f"Scenario 9: osprey serve against thumbor 7.8 under wrk -t{a.wrk_threads} -c{a.connections}"
        self.classes = {"small": a.small, **({"large": a.large} if a.large else {})}
        locations = "\n".join(f"        location ~ ^/[^/]+/{c}/(.+)$ {{ alias {os.path.abspath(d)}/$1; }}" for c, d in self.classes.items())
        first = sorted(n for n in os.listdir(a.small) if not n.startswith("."))[0]
        self.origin = sv.Nginx(scratch, "origin", locations, f"/p/small/{first}", access_log=True)
        self.files = self.select()
        self.cases, self.pairs = [], []
        for cls in self.classes:
            for fmt in a.formats.split(",") if "miss" in a.cases else []:
                self.cases.append((f"miss {cls} {fmt}", ["osprey", "thumbor", "libvips limit"]))
                self.pairs += [(f"miss {cls} {fmt}", "osprey", b, GOALS[("miss", cls, b)]) for b in ("thumbor", "libvips limit")]
            for fmt in a.hit_formats.split(",") if "hit" in a.cases else []:
                case = f"hit {cls} {fmt}"
                self.cases.append((case, ["osprey (memory hit)", "osprey (disk hit)", "nginx static", "thumbor"]))
                self.pairs += [(case, "osprey (memory hit)", "nginx static", GOALS[("hit", cls, "nginx static")]),
                               (case, "osprey (disk hit)", "nginx static", None), (case, "osprey (memory hit)", "thumbor", None)]

    def url(self, fmt, cls, name, token):
        return f"/unsafe/{OPERATION.format(fmt=fmt)}/http://127.0.0.1:{self.origin.port}/{token}/{cls}/{name}"

    def select(self):
        """The files of each class that both servers turn into JPEG and WebP (thumbor answers
        animated GIFs as GIF whatever the format filter says)."""
        servers = [sv.thumbor(self.a.thumbor, self.scratch, os.path.join(self.scratch, "thumbor-probe"), os.cpu_count()),
                   sv.osprey(self.a.osprey, self.scratch, os.path.join(self.scratch, "osprey-probe"))]
        magic = {"jpeg": lambda b: b[:2] == b"\xff\xd8", "webp": lambda b: b[:4] == b"RIFF" and b[8:12] == b"WEBP"}
        try:
            selected = {}
            for cls, directory in self.classes.items():
                selected[cls] = []
                for name in sorted(n for n in os.listdir(directory) if not n.startswith(".")):
                    answers = [(os.path.basename(s.argv[0]), fmt, s.get(self.url(fmt, cls, name, "probe"))) for fmt in magic for s in servers]
                    bad = [f"{who} {fmt}: {st} {ct}" for who, fmt, (st, ct, body) in answers if st != 200 or ct != f"image/{fmt}" or not magic[fmt](body)]
                    if bad:
                        self.notes.append(f"{cls}: {name} left out ({'; '.join(bad)})")
                    else:
                        selected[cls].append(name)
            return selected
        finally:
            for s in servers:
                s.stop()

    def measure(self, case, who, rnd):
        kind, cls, fmt = case.split()
        seconds = self.a.duration_large if kind == "miss" and cls == "large" else self.a.duration
        if who == "libvips limit":
            copies = self.a.limit_copies.split(",")[cls == "large"]
            out = subprocess.run([self.a.ospreybench, "limit9", fmt, str(os.cpu_count()), copies] +
                                 [os.path.join(self.classes[cls], n) for n in self.files[cls]],
                                 capture_output=True, text=True, env=dict(os.environ, VIPS_CONCURRENCY="1"), timeout=600, check=True)
            result = json.loads(next(l for l in out.stdout.splitlines() if l.startswith("{")))
            return dict(result, rate=result["images_per_s"], invalid=bool(result["failed"]))
        if kind == "hit":
            return self.hit(case, who, rnd, fmt, cls, seconds)
        data = os.path.join(self.scratch, f"data-{rnd}-{case}-{who}".replace(" ", "-"))
        server = (sv.osprey(self.a.osprey, self.scratch, data) if who == "osprey"
                  else sv.thumbor(self.a.thumbor, self.scratch, data, os.cpu_count()))
        try:
            return self.wrk(server, [self.url(fmt, cls, n, "{u}") for n in self.files[cls]], "unique", seconds, check=True)
        finally:
            server.stop()
            shutil.rmtree(data, ignore_errors=True)

    def wrk(self, server, paths, mode, seconds, check=False):
        options = dict(threads=self.a.wrk_threads, connections=self.a.connections, check=check)
        sv.wrk(server, paths, mode, self.a.warmup, self.scratch, **options)
        return sv.wrk(server, paths, mode, seconds, self.scratch, origin=self.origin if mode == "unique" else None, **options)

    def hit(self, case, who, rnd, fmt, cls, seconds):
        """The round's cache directory and static files are made by the first of its participants."""
        cache, static = (os.path.join(self.scratch, f"{x}-{rnd}-{case}".replace(" ", "-")) for x in ("cache", "static"))
        paths = [self.url(fmt, cls, n, "fixed") for n in self.files[cls]]
        if (case, rnd) not in self.prepared:
            os.makedirs(static)
            server = sv.osprey(self.a.osprey, self.scratch, cache)
            try:
                for path, name in zip(paths, self.files[cls]):
                    status, ctype, body = server.get(path)
                    if status != 200 or ctype != f"image/{fmt}" or server.get(path)[2] != body:
                        raise RuntimeError(f"warming {path}: {status} {ctype}, or its cached answer differs")
                    with open(os.path.join(static, name + "." + fmt), "wb") as f:
                        f.write(body)
            finally:
                server.stop()
            self.prepared[(case, rnd)] = [f"/s/{n}.{fmt}" for n in self.files[cls]]
        if who == "nginx static":
            server = sv.Nginx(self.scratch, f"static-{rnd}", f"        location /s/ {{ alias {static}/; }}",
                              self.prepared[(case, rnd)][0], workers=os.cpu_count())
        elif who == "thumbor":
            server = sv.thumbor(self.a.thumbor, self.scratch, os.path.join(self.scratch, f"thumbor-hit-{rnd}"), os.cpu_count())
        else:
            server = sv.osprey(self.a.osprey, self.scratch, cache, *(["--memory-cache-mb", "0"] if "disk" in who else []))
        try:
            before = sv.metrics(server, "osprey_cache_hits_total{") if who.startswith("osprey") else {}
            result = self.wrk(server, self.prepared[(case, rnd)] if who == "nginx static" else paths, "fixed", seconds)
            if who.startswith("osprey"):
                level = "result_memory" if "memory" in who else "result_disk"
                counted = sv.metrics(server, "osprey_cache_hits_total{").get(level, 0) - before.get(level, 0)
                if counted < result["requests"]:
                    self.notes.append(f"round {rnd + 1} {case} / {who}: {counted:.0f} {level} hits for {result['requests']} answers")
                    result["invalid"] = True
            return result
        finally:
            server.stop()

    def close(self):
        self.origin.stop()
