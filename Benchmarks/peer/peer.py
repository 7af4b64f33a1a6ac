#!/usr/bin/env python3
"""The peer of scenario 8 (`ab.py cli --peer`): the job as a user would write it without Osprey.

requests + a thread pool + Pillow: fetch each URL, thumbnail to fit 256x256, encode JPEG q80,
write the file atomically (temp + rename) into --out. Prints a JSON report on stdout:
seconds (the job only, after imports), ok, failed, maxrss_mb (VmHWM of this process).
"""
import argparse
import hashlib
import io
import json
import os
import resource
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests
from PIL import Image, ImageOps

_local = threading.local()


def session():
    s = getattr(_local, "session", None)
    if s is None:
        s = _local.session = requests.Session()
    return s


def thumbnail(data):
    im = Image.open(io.BytesIO(data))
    im.thumbnail((256, 256))
    im = ImageOps.exif_transpose(im)
    if im.mode != "RGB":
        im = im.convert("RGB")
    out = io.BytesIO()
    im.save(out, "JPEG", quality=80)
    return out.getvalue()


def job(url, out_dir):
    response = session().get(url, timeout=60)
    response.raise_for_status()
    encoded = thumbnail(response.content)
    path = os.path.join(out_dir, hashlib.sha256(url.encode()).hexdigest() + ".jpg")
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(encoded)
    os.replace(tmp, path)


def peak_rss_mb():
    # VmHWM of this process image (ru_maxrss would carry over the parent's peak across fork+exec).
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--urls", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    with open(args.urls) as f:
        urls = [line.strip() for line in f if line.strip()]
    os.makedirs(args.out, exist_ok=True)
    ok = failed = 0
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        for future in [pool.submit(job, url, args.out) for url in urls]:
            try:
                future.result()
                ok += 1
            except Exception as error:
                failed += 1
                print(f"peer: {error}", file=sys.stderr)
    seconds = time.perf_counter() - start
    maxrss_mb = peak_rss_mb()
    json.dump({"seconds": seconds, "ok": ok, "failed": failed, "maxrss_mb": maxrss_mb}, sys.stdout)


if __name__ == "__main__":
    main()
