"""Local sources, uploads and /info as Benchmarks/ab.py runs them (`ab.py store`), under wrk:

1. local-source misses: `osprey serve --local-root` reading the test images from disk (thumbor bare
   paths) against the same images over a loopback nginx origin, scenario 9's operation as JPEG
   (goal: local ≥ 1.0×). Every request names a file not asked before in that process (hard links
   `l/m/K/NAME` of the images; each measured run starts a fresh process with an empty cache);
2. upload throughput: POST of the test images (raw body, `Slug`, wrk-upload.lua), `osprey serve
   --upload` against thumbor 7.8's upload API (UPLOAD_ENABLED, file storage);
3. `/info/unsafe/SOURCE` and Osprey's `meta/` against thumbor's `meta/` on the 4000×3000 photos, each
   request a new source URL over the origin, so neither answers from a cache.

`--include FILE` copies a text file (the upload parity summary) into the report."""
import os
import shutil
import subprocess

import servers as sv

OPERATION = "fit-in/512x512/filters:quality(80):format(jpeg)"
PHOTOS = ("astronaut.png", "chelsea.png", "coffee.png", "hubble_deep_field.jpg", "motorcycle_left.png", "rocket.jpg")
LOCAL, ORIGIN, UPLOAD, THUMBOR_UPLOAD = "local (--local-root)", "nginx origin (http)", "osprey --upload", "thumbor 7.8 upload API"


def arguments(p):
    p.add_argument("--osprey", required=True, help="the release osprey binary")
    p.add_argument("--thumbor", required=True, help="the thumbor executable of the virtualenv")
    p.add_argument("--images", default=os.path.join(sv.ROOT, "Tests", "Fixtures", "images"))
    p.add_argument("--photos", default=os.path.join(sv.ROOT, "Benchmarks", ".work", "large"), help="4000x3000 photos (made when missing)")
    p.add_argument("--duration", type=int, default=10, help="seconds per measured run")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--connections", type=int, default=8)
    p.add_argument("--copies", type=int, default=300, help="hard links of each image for measured local/origin runs")
    p.add_argument("--warm-copies", type=int, default=20)
    p.add_argument("--include", action="append", default=[], help="a text file copied into the report (repeatable)")


class Scenario:
    title = "Local sources, uploads, /info against the origin and thumbor 7.8 (wrk -t1, a fresh server per run)"
    cases = [("local-source misses", [LOCAL, ORIGIN]), ("upload POST", [UPLOAD, THUMBOR_UPLOAD]),
             ("info on photos", ["osprey /info", "thumbor meta/", "osprey meta/"])]
    pairs = [("local-source misses", LOCAL, ORIGIN, 1.0), ("upload POST", UPLOAD, THUMBOR_UPLOAD, None),
             ("info on photos", "osprey /info", "thumbor meta/", None), ("info on photos", "osprey meta/", "thumbor meta/", None)]

    def __init__(self, a, scratch):
        self.a, self.scratch, self.notes, self.servers = a, scratch, [], 0
        self.tree = os.path.join(scratch, "tree")  # the local root and the origin's root
        names = sorted(n for n in os.listdir(a.images) if not n.startswith("."))
        os.makedirs(os.path.join(self.tree, "images"))
        for name in names:
            shutil.copy(os.path.join(a.images, name), os.path.join(self.tree, "images"))
        for group, copies in (("w", a.warm_copies), ("m", a.copies)):  # hard links: the same inodes, page cache
            for k in range(copies):
                os.makedirs(os.path.join(self.tree, "l", group, str(k)))
                for name in names:
                    os.link(os.path.join(self.tree, "images", name), os.path.join(self.tree, "l", group, str(k), name))
        os.makedirs(a.photos, exist_ok=True)
        if not [n for n in os.listdir(a.photos) if n.endswith(".jpg")]:
            for name in PHOTOS:  # as Benchmarks/run.sh makes them
                subprocess.check_call(["vips", "thumbnail", os.path.join(a.images, name), os.path.join(
                    a.photos, f"large_{os.path.splitext(name)[0]}.jpg[Q=90]"), "4000", "--height", "3000", "--size", "force"])
        self.photos = sorted(n for n in os.listdir(a.photos) if n.endswith(".jpg"))
        self.origin = sv.Nginx(scratch, "origin", f"        location ^~ /l/ {{ root {self.tree}; }}\n"
                               f"        location ~ ^/p/[^/]+/(.+)$ {{ alias {os.path.abspath(a.photos)}/$1; }}",
                               f"/p/probe/{self.photos[0]}", access_log=True)
        self.select(names)

    def start(self, who):
        self.servers += 1
        if who.startswith("thumbor"):
            return sv.thumbor(self.a.thumbor, self.scratch, os.path.join(self.scratch, f"thumbor-{self.servers}"), os.cpu_count(), uploads=True)
        flags = {LOCAL: ["--local-root", self.tree], ORIGIN: ["--local-root", self.tree],
                 UPLOAD: ["--upload", "--upload-dir", os.path.join(self.scratch, f"uploads-{self.servers}")]}.get(who, [])
        return sv.osprey(self.a.osprey, self.scratch, os.path.join(self.scratch, f"osprey-{self.servers}"), *flags)

    def select(self, names):
        """The images every participant takes: image/jpeg by path and over the origin; 201 for an
        upload on both servers; the photos' sizes in /info and meta/."""
        osprey = sv.osprey(self.a.osprey, self.scratch, os.path.join(self.scratch, "probe"), "--local-root", self.tree,
                           "--upload", "--upload-dir", os.path.join(self.scratch, "probe-uploads"))
        thumbor = self.start(THUMBOR_UPLOAD)
        try:
            self.local_names, self.upload_names = [], []
            for name in names:
                answers = [osprey.get(self.local_url(name, "w", 0, remote))[:2] for remote in (False, True)]
                (self.local_names.append(name) if all(x == (200, "image/jpeg") for x in answers)
                 else self.notes.append(f"local/origin: {name} left out ({answers})"))
                with open(os.path.join(self.tree, "images", name), "rb") as f:
                    body = f.read()
                statuses = [s.get("/image", data=body, method="POST", headers={"Slug": name, "Content-Type": "application/octet-stream"})[0]
                            for s in (osprey, thumbor)]
                (self.upload_names.append(name) if statuses == [201, 201]
                 else self.notes.append(f"uploads: {name} left out (osprey {statuses[0]}, thumbor {statuses[1]})"))
            for server, kind in ((osprey, "osprey /info"), (thumbor, "thumbor meta/")):
                status, ctype, body = server.get(self.info_url(kind, self.photos[0]).replace("{u}", "probe"))
                if status != 200 or b"4000" not in body:
                    raise RuntimeError(f"{kind}: {status} {ctype} {body[:300]!r}")
        finally:
            osprey.stop()
            thumbor.stop()

    def local_url(self, name, group, k, remote):
        path = f"l/{group}/{k}/{name}"
        return f"/unsafe/{OPERATION}/" + (f"http://127.0.0.1:{self.origin.port}/{path}" if remote else path)

    def info_url(self, who, photo):
        source = f"http://127.0.0.1:{self.origin.port}/p/{{u}}/{photo}"
        return f"/info/unsafe/{source}" if who == "osprey /info" else f"/unsafe/meta/{source}"

    def measure(self, case, who, rnd):
        if case == "local-source misses":
            warm, paths = ([self.local_url(n, g, k, who == ORIGIN) for k in range(c) for n in self.local_names]
                           for g, c in (("w", self.a.warm_copies), ("m", self.a.copies)))
            mode, script = "fixed", sv.WRK_PATHS
        elif case == "upload POST":
            warm = paths = [os.path.join(self.tree, "images", n) for n in self.upload_names]
            mode, script = "fixed", sv.WRK_UPLOAD
        else:
            warm = paths = [self.info_url(who, p) for p in self.photos]
            mode, script = "unique", sv.WRK_PATHS
        server = self.start(who)
        options = dict(threads=1, connections=self.a.connections, script=script)  # one thread: each list walked once, in order
        try:
            sv.wrk(server, warm, mode, self.a.warmup, self.scratch, **options)
            return sv.wrk(server, paths, mode, self.a.duration, self.scratch, origin=self.origin, **options)
        finally:
            server.stop()

    def close(self):
        self.origin.stop()
        for path in self.a.include:
            with open(path) as f:
                self.notes.append(f"included {path}:\n" + f.read().rstrip())
