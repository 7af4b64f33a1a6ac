"""The soak's requests: what to ask (a weighted mix of hits, misses, bad URLs, bad signatures,
origin faults and mutated images), how to sign it, and how to judge each answer."""
import base64
import hashlib
import hmac
import http.client
import io
import os
import random
import socket
import struct
import threading
import time
import urllib.parse

from PIL import Image

THUMBOR_KEY = "soak-key"
IMGPROXY_KEY = bytes.fromhex("736f616b")  # "soak"
IMGPROXY_SALT = bytes.fromhex("73616c74")  # "salt"

IMAGES = ["astronaut.png", "camera.png", "chelsea.png", "coffee.png", "hopper.avif", "hopper.gif", "hopper.jpg",
          "hopper.png", "hopper.webp", "hopper_orientation_3.jpg", "hopper_orientation_6.jpg",
          "hopper_orientation_8.webp", "hubble_deep_field.jpg", "iss634.gif", "logo.png", "motorcycle_left.png",
          "no_time_for_that_tiny.gif", "pil_sample_cmyk.jpg", "retina.jpg", "rocket.jpg", "text.png"]
SMALL = ["hopper.jpg", "hopper.png", "hopper.webp", "hopper.gif", "rocket.jpg", "chelsea.png"]

# Origin faults (path template, weight). A request for one is judged "correct image, or a 4xx/5xx
# with a reason"; the table in the report shows which status each fault got.
FAULTS = [
    ("delay/1000/{n}", 6), ("delay/8000/{n}", 3), ("stall/{n}", 4), ("reset/{n}", 5), ("reset0/{n}", 4),
    ("trunc/{n}", 5), ("cl-big/{n}", 4), ("cl-small/{n}", 4), ("status/500/{n}", 3), ("status/503/{n}", 3),
    ("status/429/{n}", 3), ("status/404/{n}", 2), ("loop/{n}", 4), ("html/{n}", 3), ("html-as-image/{n}", 3),
    ("huge-cl/{n}", 1), ("huge-chunked/{n}", 1), ("bomb/bomb-png.png", 2), ("bomb/bomb-jpeg.jpg", 2), ("bomb/bomb-png-in-limit.png", 1),
    ("gzip-bomb/{n}", 2), ("broken/half/{n}", 4), ("broken/head/{n}", 3),
]
MIX = [("hit", 30), ("miss", 18), ("badurl", 5), ("badsig", 5), ("fault", 30), ("mut", 12)]
# SOAK_MIX="hit=30,miss=18,..." replaces the weights (kinds left out are not drawn).
if os.environ.get("SOAK_MIX"):
    MIX = [(k, int(w)) for k, w in (item.split("=") for item in os.environ["SOAK_MIX"].split(","))]


def thumbor_url(path):
    sig = base64.urlsafe_b64encode(hmac.new(THUMBOR_KEY.encode(), path.encode(), hashlib.sha1).digest()).decode()
    return f"/{sig}/{path}"


def imgproxy_url(path):
    sig = base64.urlsafe_b64encode(hmac.new(IMGPROXY_KEY, IMGPROXY_SALT + path.encode(), hashlib.sha256).digest())
    return f"/imgproxy/{sig.decode().rstrip('=')}{path}"


class Mix:
    """Draws requests; `origin` is "127.0.0.1:PORT". Thread-safe."""

    def __init__(self, origin, seed=17):
        self.origin = origin
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.counter = 0
        self.hits = [(g, n, w, h) for n in IMAGES for (w, h) in ((160, 120), (300, 200)) for g in ("t", "i")]

    def url(self, grammar, source, w, h):
        src = f"http://{self.origin}/{source}"
        if grammar == "t":
            return thumbor_url(f"fit-in/{w}x{h}/{src}")
        return imgproxy_url(f"/rs:fit:{w}:{h}/plain/{urllib.parse.quote(src, safe='')}")

    def draw(self):
        """(kind, label, url, (w, h) or None): what to ask and the bounding box a result must fit."""
        with self.lock:
            rng = self.rng
            self.counter += 1
            count = self.counter
            kind = rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
            if kind == "hit":
                g, n, w, h = rng.choice(self.hits)
                return kind, "hit", self.url(g, f"img/{n}", w, h), (w, h)
            if kind == "miss":
                w, h = 40 + count % 360, 40 + (count // 360) % 360
                n = rng.choice(IMAGES)
                return kind, "miss", self.url(rng.choice("ti"), f"img/{n}", w, h), (w, h)
            if kind == "badsig":
                good = self.url("t", f"img/{rng.choice(SMALL)}", 100, 100)
                bad = rng.choice([
                    "/" + base64.urlsafe_b64encode(rng.randbytes(20)).decode() + good[good.index("/", 1):],
                    "/unsafe" + good[good.index("/", 1):],
                    "/imgproxy/" + base64.urlsafe_b64encode(rng.randbytes(32)).decode().rstrip("=") + "/rs:fit:100:100/plain/http://" + self.origin + "/img/hopper.jpg",
                    "/imgproxy/_/rs:fit:100:100/plain/http://" + self.origin + "/img/hopper.jpg",
                    good[:5] + ("A" if good[5] != "A" else "B") + good[6:],
                ])
                return kind, "badsig", bad, None
            if kind == "badurl":
                bad = rng.choice([
                    thumbor_url("300x200/"), thumbor_url("fit-in/axb/http://" + self.origin + "/img/hopper.jpg"),
                    thumbor_url("300x200/filters:blur(9999999999999999999)/http://" + self.origin + "/img/hopper.jpg"),
                    thumbor_url("300x200/filters:nope(/http://" + self.origin + "/img/hopper.jpg"),
                    thumbor_url("99999999x99999999/http://" + self.origin + "/img/hopper.jpg"),
                    thumbor_url("300x200/ftp://" + self.origin + "/img/hopper.jpg"),
                    thumbor_url("300x200/http://169.254.169.254/latest/meta-data"),
                    imgproxy_url("/rs:fit:-5:abc/plain/http://" + self.origin + "/img/hopper.jpg"),
                    imgproxy_url("/q:1000/plain/http://" + self.origin + "/img/hopper.jpg"),
                    imgproxy_url("/rs:fit:100:100/%%%%"), imgproxy_url("/rs:fit:100:100/" + "A" * 30),
                    "/" + "a/" * 3000, "/%zz%00", "/imgproxy/", "/imgproxy/x",
                ])
                return kind, "badurl", bad, None
            if kind == "fault":
                template = rng.choices([t for t, _ in FAULTS], [w for _, w in FAULTS])[0]
                n = rng.choice(SMALL)
                w, h = rng.choice([(100, 100), (64 + count % 200, 64)])
                return kind, template.split("/")[0] + ("/" + template.split("/")[1] if template.split("/")[0] in ("status", "delay", "bomb", "broken") else ""), \
                    self.url(rng.choice("ti"), template.format(n=n), w, h), (w, h)
            seed = rng.randrange(4000)
            n = rng.choice(IMAGES)
            return kind, "mut", self.url(rng.choice("ti"), f"mut/{seed}/{n}", 200, 200), (200, 200)


def fetch(host, port, url, timeout):
    """(status, headers, body, seconds); status None and body the error text when the request failed."""
    start = time.monotonic()
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", url)
        response = conn.getresponse()
        body = response.read()
        return response.status, dict(response.getheaders()), body, time.monotonic() - start
    except (OSError, http.client.HTTPException) as error:
        return None, {}, repr(error).encode(), time.monotonic() - start
    finally:
        conn.close()


def judge(kind, status, headers, body, box):
    """(ok, verdict): verdict is "image WxH FMT", "STATUS reason", or why the answer is wrong."""
    if status is None:
        return False, "no answer: " + body.decode(errors="replace")[:120]
    if status == 200:
        try:
            image = Image.open(io.BytesIO(body))
            image.load()
        except Exception as error:  # Pillow raises many types for bad data
            return False, f"200 but not a decodable image ({type(error).__name__}: {error})"[:200]
        if box and (image.width > box[0] or image.height > box[1] or image.width < 1 or image.height < 1):
            return False, f"200 but {image.width}x{image.height} does not fit {box[0]}x{box[1]}"
        if kind in ("badurl", "badsig"):
            return False, f"200 for a {kind}"
        return True, f"image {image.format}"
    text = body.decode(errors="replace")
    one_line = text.strip() and "\n" not in text.strip()
    if not one_line:
        return False, f"{status} without a one-line reason: {text[:80]!r}"
    if kind == "badsig" and status != 403:
        return False, f"{status} for a bad signature: {text.strip()[:100]}"
    # Back-pressure (429), a cancelled wait (503) and the whole-request deadline (504) are correct
    # answers under overload; any other error for a good image is not.
    if kind in ("hit", "miss") and status not in (429, 503, 504):
        return False, f"{status} for a good image: {text.strip()[:100]}"
    if not 400 <= status < 600:
        return False, f"unexpected {status}"
    return True, str(status)


def disconnect(host, port, url, rng):
    """A client that goes away: mid-request-line, after the request, or mid-body (some with a RST)."""
    s = socket.create_connection((host, port), timeout=5)
    try:
        how = rng.randrange(3)
        request = f"GET {url} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        if how == 0:
            s.sendall(request[:rng.randrange(1, len(request))])
            time.sleep(rng.random() * 0.5)
        elif how == 1:
            s.sendall(request)
            time.sleep(rng.random() * 1.5)
        else:
            s.sendall(request)
            s.recv(64)
        if rng.random() < 0.5:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    finally:
        s.close()
    return how
