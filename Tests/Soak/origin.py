"""A misbehaving image origin for the soak: serves the test images and, by URL path, each fault.

    /img/NAME, /img/ANY/NAME  the image, well behaved (ETag, Cache-Control)
    /slow/SECONDS/NAME        waits SECONDS before the first byte
    /stall/NAME               headers and half the body, then nothing for 60 s
    /reset/NAME               headers and a third of the body, then a TCP reset
    /reset0/NAME              a TCP reset before any byte
    /trunc/NAME               full Content-Length, half the body, then close
    /cl-big/NAME              Content-Length 5000 bytes over the body, then close
    /cl-small/NAME            Content-Length half the body, the whole body sent
    /status/CODE/NAME         that status with a text body (429 and 503 with Retry-After)
    /loop/NAME                302 to itself
    /html/NAME                200 text/html;  /html-as-image/NAME: HTML labelled image/jpeg
    /huge-cl/NAME             100 MB body with its Content-Length;  /huge-chunked/NAME: chunked, no length
    /bomb/png, /bomb/jpeg     20000x20000 images (400 Mpx) of a few hundred KB
    /bomb/png-in-limit        7000x7000 PNG (49 Mpx, just under the default pixel limit)
    /gzip-bomb/NAME           Content-Encoding: gzip, 1 GiB of zeros in ~1 MB
    /broken/half/NAME, /broken/head/NAME   the image cut at 50 % / after 64 bytes
    /mut/SEED/NAME            the image mutated by mutate.mutate(data, SEED)

Usage: origin.py IMAGE_DIR WORK_DIR PORT   (prints "origin: listening on PORT" when ready)
"""
import gzip
import http.server
import os
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib

from mutate import mutate

HUGE = 100 * 1024 * 1024
CHUNK = b"\0" * (1 << 20)


def make_assets(work):
    """The bombs, generated once into WORK_DIR (vips streams them, so memory stays small)."""
    os.makedirs(work, exist_ok=True)
    assets = {}
    for name, args in (("png", ["20000", "20000"]), ("jpeg", ["20000", "20000"]), ("png-in-limit", ["7000", "7000"])):
        ext = "jpg" if name == "jpeg" else "png"
        path = os.path.join(work, f"bomb-{name}.{ext}")
        if not os.path.exists(path):
            tmp = path + ".tmp." + ext
            subprocess.run(["vips", "black", tmp] + args, check=True)
            os.rename(tmp, path)
        assets[name] = open(path, "rb").read()
    path = os.path.join(work, "gzip-bomb.gz")
    if not os.path.exists(path):
        with open(path + ".tmp", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as out:
            for _ in range(1024):
                out.write(CHUNK)
        os.rename(path + ".tmp", path)
    assets["gzip"] = open(path, "rb").read()
    return assets


def content_type(name):
    ext = name.rsplit(".", 1)[-1].lower()
    return {"jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif",
            "webp": "image/webp", "avif": "image/avif"}.get(ext, "application/octet-stream")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    images = {}
    assets = {}

    def log_message(self, *args):
        pass

    def reset(self):
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def head(self, status, ctype, length=None, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if length is not None:
            self.send_header("Content-Length", str(length))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()

    def send(self, status, body, ctype="text/plain", extra=()):
        self.head(status, ctype, len(body), extra)
        self.wfile.write(body)

    def do_GET(self):
        try:
            self.route(self.path.split("?", 1)[0].strip("/").split("/"))
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def route(self, parts):
        kind, rest = parts[0], parts[1:]
        name = rest[-1] if rest else ""
        data = self.images.get(name)
        if kind == "bomb":
            body = self.assets.get(name)
            if body is None:
                return self.send(404, b"no such bomb\n")
            return self.send(200, body, "image/jpeg" if name == "jpeg" else "image/png")
        if data is None:
            return self.send(404, b"no such image\n")
        ctype = content_type(name)
        if kind == "img":
            return self.send(200, data, ctype, [("ETag", f'"{len(data)}"'), ("Cache-Control", "max-age=3600")])
        if kind == "slow":
            time.sleep(float(rest[0]))
            return self.send(200, data, ctype)
        if kind == "stall":
            self.head(200, ctype, len(data))
            self.wfile.write(data[:len(data) // 2])
            self.wfile.flush()
            time.sleep(60)
            self.close_connection = True
            return
        if kind == "reset":
            self.head(200, ctype, len(data))
            self.wfile.write(data[:len(data) // 3])
            self.wfile.flush()
            return self.reset()
        if kind == "reset0":
            return self.reset()
        if kind == "trunc":
            self.head(200, ctype, len(data))
            self.wfile.write(data[:len(data) // 2])
            self.close_connection = True
            return
        if kind == "cl-big":
            self.head(200, ctype, len(data) + 5000)
            self.wfile.write(data)
            self.close_connection = True
            return
        if kind == "cl-small":
            self.head(200, ctype, len(data) // 2)
            self.wfile.write(data)
            self.close_connection = True
            return
        if kind == "status":
            code = int(rest[0])
            extra = [("Retry-After", "1")] if code in (429, 503) else []
            return self.send(code, f"origin says {code}\n".encode(), extra=extra)
        if kind == "loop":
            self.head(302, "text/plain", 0, [("Location", self.path)])
            return
        if kind == "html":
            return self.send(200, b"<!doctype html><html><body>not an image</body></html>\n", "text/html")
        if kind == "html-as-image":
            return self.send(200, b"<!doctype html><html><body>not an image</body></html>\n", ctype)
        if kind == "huge-cl":
            self.head(200, ctype, HUGE)
            return self.stream(data)
        if kind == "huge-chunked":
            self.head(200, ctype, None, [("Transfer-Encoding", "chunked")])
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            sent = len(data)
            while sent < HUGE:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(CHUNK), CHUNK))
                sent += len(CHUNK)
            self.wfile.write(b"0\r\n\r\n")
            return
        if kind == "gzip-bomb":
            return self.send(200, self.assets["gzip"], ctype, [("Content-Encoding", "gzip")])
        if kind == "broken":
            return self.send(200, data[:len(data) // 2] if rest[0] == "half" else data[:64], ctype)
        if kind == "mut":
            _, body = mutate(data, int(rest[0]))
            return self.send(200, body, ctype)
        return self.send(404, b"no such fault\n")

    def stream(self, first):
        self.wfile.write(first)
        sent = len(first)
        while sent < HUGE:
            piece = CHUNK[:min(len(CHUNK), HUGE - sent)]
            self.wfile.write(piece)
            sent += len(piece)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def handle_error(self, request, client_address):
        # The server under test closing or resetting its origin connection is part of the soak.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def main():
    image_dir, work, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    Handler.images = {n: open(os.path.join(image_dir, n), "rb").read() for n in os.listdir(image_dir)
                      if n.rsplit(".", 1)[-1].lower() in ("jpg", "png", "gif", "webp", "avif")}
    Handler.assets = make_assets(work)
    server = Server(("127.0.0.1", port), Handler)
    print(f"origin: listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
