#!/usr/bin/env python3
"""The same upload API request sequence against thumbor 7.8 (UPLOAD_ENABLED) and `osprey serve --upload`.

    python3 Tests/ThumborParity/thumbor_upload_parity.py --osprey .build/release/osprey \
        [--venv Benchmarks/.work/thumbor-venv] [--images Tests/Fixtures/images]

Makes the virtualenv and installs thumbor from PyPI (Benchmarks/server/thumbor-requirements.txt)
when it has no `thumbor` yet. Starts each server twice: once with PUT and DELETE refused (thumbor's
defaults, Osprey's too) and once with them allowed (UPLOAD_PUT_ALLOWED / UPLOAD_DELETE_ALLOWED,
`--upload-put` / `--upload-delete`), both with file storage in a scratch directory, unsafe URLs and a
byte limit of 200,000 (UPLOAD_MAX_SIZE, `--max-source-bytes`). Sends each the same requests and
prints one line per request: each server's status, and for POST the shape of `Location` (the id
replaced by `<id>`); for GET, whether the bytes are those uploaded. The last column says whether
the two agree. Exit status 0 when every status and Location shape agrees. Not run in CI.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import uuid

from parity_support import free_port, wait_ready

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
LIMIT = 200_000
ID = re.compile(r"[0-9a-f]{32}")


def ensure_thumbor(venv):
    thumbor = os.path.join(venv, "bin", "thumbor")
    if not os.path.exists(thumbor):
        subprocess.check_call([sys.executable, "-m", "venv", venv])
        subprocess.check_call([os.path.join(venv, "bin", "pip"), "install", "-q", "-r",
                               os.path.join(ROOT, "Benchmarks", "server", "thumbor-requirements.txt")])
    return thumbor


def send(port, method, path, body=None, headers=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def multipart(field, filename, data):
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{filename}\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}


def jpeg_bomb(data, width=60000, height=60000):
    """The JPEG with its frame header patched to declare width x height."""
    b = bytearray(data)
    i = 2
    while i + 9 < len(b) and b[i] == 0xFF:
        marker, length = b[i + 1], b[i + 2] << 8 | b[i + 3]
        if 0xC0 <= marker <= 0xC2:
            b[i + 5:i + 9] = bytes([height >> 8, height & 0xFF, width >> 8, width & 0xFF])
            return bytes(b)
        i += 2 + length
    raise ValueError("no SOF marker")


def start(kind, args, work, allow_changes):
    port = free_port()
    storage = os.path.join(work, f"{kind}-{'rw' if allow_changes else 'ro'}")
    os.makedirs(storage)
    if kind == "thumbor":
        conf = os.path.join(storage, "thumbor.conf")
        with open(conf, "w") as f:
            f.write(f"UPLOAD_ENABLED = True\nUPLOAD_PUT_ALLOWED = {allow_changes}\nUPLOAD_DELETE_ALLOWED = {allow_changes}\n"
                    f"UPLOAD_MAX_SIZE = {LIMIT}\nSTORAGE = 'thumbor.storages.file_storage'\n"
                    f"FILE_STORAGE_ROOT_PATH = '{storage}/files'\nRESULT_STORAGE = None\nALLOW_UNSAFE_URL = True\n")
        command = [args.thumbor, "--ip", "127.0.0.1", "--port", str(port), "--conf", conf, "--log-level", "error"]
        ready = f"http://127.0.0.1:{port}/healthcheck"
    else:
        command = [args.osprey, "serve", "--host", "127.0.0.1", "--port", str(port), "--upload", "--upload-dir",
                   os.path.join(storage, "files"), "--max-source-bytes", str(LIMIT)]
        if allow_changes:
            command += ["--upload-put", "--upload-delete"]
        ready = f"http://127.0.0.1:{port}/health"
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_ready(ready, process)
    return port, process


def sequence(port, images, allow_changes):
    """(case, status, detail) for each request, ids replaced by <id>."""
    jpg, png = images["jpg"], images["png"]
    rows = []

    def post(case, body, headers, uploaded):
        status, headers_out, _ = send(port, "POST", "/image", body, headers)
        location = headers_out.get("Location") or headers_out.get("location") or ""
        rows.append((case, status, ID.sub("<id>", location)))
        match = ID.search(location)
        return (match.group(0), location, uploaded) if match else None

    first = post("POST body + Slug", jpg, {"Slug": "photo.jpg", "Content-Type": "image/jpeg"}, jpg)
    body, headers = multipart("media", "logo.png", png)
    second = post("POST multipart media", body, headers, png)
    post("POST body, no Slug", jpg, {"Content-Type": "image/jpeg"}, jpg)
    for case, body, headers in [
        ("POST text file", b"just some text, not an image\n", {"Slug": "a.txt", "Content-Type": "text/plain"}),
        ("POST bomb (60000x60000 declared)", jpeg_bomb(jpg), {"Slug": "bomb.jpg", "Content-Type": "image/jpeg"}),
        ("POST over the byte limit", jpg + b"\0" * LIMIT, {"Slug": "big.jpg", "Content-Type": "image/jpeg"}),
    ]:
        post(case, body, headers, None)
    for upload, name in [(first, "first"), (second, "second")]:
        if not upload:
            continue
        id_, location, uploaded = upload
        for case, method, path in [("GET Location", "GET", location), ("GET /image/<id>", "GET", f"/image/{id_}"),
                                   ("HEAD /image/<id>", "HEAD", f"/image/{id_}")]:
            status, _, data = send(port, method, path)
            detail = ("same bytes" if data == uploaded else "other bytes") if method == "GET" and status == 200 else ""
            rows.append((f"{case} ({name})", status, detail))
        status, _, _ = send(port, "GET", f"/unsafe/100x100/{id_}")
        rows.append((f"GET /unsafe/100x100/<id> ({name})", status, ""))
    if first:
        id_ = first[0]
        status, _, _ = send(port, "PUT", f"/image/{id_}", png, {"Content-Type": "image/png"})
        rows.append(("PUT /image/<id>", status, ""))
        if allow_changes and status // 100 == 2:
            status, _, data = send(port, "GET", f"/image/{id_}")
            rows.append(("GET after PUT", status, "new bytes" if data == png else "old bytes"))
        status, _, _ = send(port, "PUT", f"/image/{id_}", b"text", {"Content-Type": "text/plain"})
        rows.append(("PUT a text file", status, ""))
        status, _, _ = send(port, "DELETE", f"/image/{id_}")
        rows.append(("DELETE /image/<id>", status, ""))
        status, _, _ = send(port, "GET", f"/image/{id_}")
        rows.append(("GET after DELETE", status, ""))
        status, _, _ = send(port, "DELETE", f"/image/{id_}")
        rows.append(("DELETE again", status, ""))
    status, _, _ = send(port, "GET", "/image/" + "0" * 32)
    rows.append(("GET unknown id", status, ""))
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--osprey", required=True)
    p.add_argument("--venv", default=os.path.join(ROOT, "Benchmarks", ".work", "thumbor-venv"))
    p.add_argument("--images", default=os.environ.get("OSPREY_TESTDATA") or os.path.join(ROOT, "Tests", "Fixtures", "images"))
    args = p.parse_args()
    args.thumbor = ensure_thumbor(args.venv)
    images = {key: open(os.path.join(args.images, name), "rb").read() for key, name in [("jpg", "hopper.jpg"), ("png", "logo.png")]}

    work = tempfile.mkdtemp(prefix="upload-parity-")
    processes = []
    disagreements = 0
    try:
        print("# thumbor 7.8 upload API vs osprey serve --upload: the same requests, status and Location shape")
        for allow_changes in (False, True):
            answers = {}
            for kind in ("thumbor", "osprey"):
                port, process = start(kind, args, work, allow_changes)
                processes.append(process)
                answers[kind] = sequence(port, images, allow_changes)
            print(f"\n## PUT and DELETE {'allowed' if allow_changes else 'refused (defaults)'}\n")
            print("| request | thumbor | osprey | same |")
            print("|---|---|---|---|")
            for t, o in zip(answers["thumbor"], answers["osprey"]):
                same = t[1] == o[1] and (t[2] == o[2] or not t[2].startswith("/"))
                disagreements += 0 if same else 1
                print(f"| {t[0]} | {t[1]} {t[2]} | {o[1]} {o[2]} | {'yes' if same else 'NO'} |")
            if len(answers["thumbor"]) != len(answers["osprey"]):
                disagreements += 1
                print(f"| (sequences differ in length: {len(answers['thumbor'])} vs {len(answers['osprey'])}) | | | NO |")
        print(f"\n{disagreements} disagreement(s)")
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if disagreements else 0)


if __name__ == "__main__":
    main()
