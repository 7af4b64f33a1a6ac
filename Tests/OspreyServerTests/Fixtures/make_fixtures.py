#!/usr/bin/env python3
"""Regenerates client-made URL fixtures for OspreyServerTests.

URLs are made by the real client libraries, so the tests check Osprey against them:
  pip install libthumbor pyimgproxy
  python3 Tests/OspreyServerTests/Fixtures/make_fixtures.py > Tests/OspreyServerTests/Fixtures/client_urls.json

The image URLs point at a loopback origin on a fixed port (ORIGIN_PORT) that the end-to-end
fixture test starts; signatures cover the image URL, so the port cannot change per run.
"""
import json

import libthumbor
from libthumbor import CryptoURL
from pyimgproxy import ImgProxy

ORIGIN_PORT = 47811
ORIGIN = f"http://127.0.0.1:{ORIGIN_PORT}"
THUMBOR_KEY = "osprey-thumbor-test-key"
IMGPROXY_KEY = "secret".encode().hex()
IMGPROXY_SALT = "hello".encode().hex()

thumbor_cases = [
    # (name, generate() options, expected width, expected height, expected format)
    ("fill", dict(width=120, height=80), 120, 80, "jpeg"),
    ("fit-in", dict(width=100, height=100, fit_in=True), 100, 75, "jpeg"),
    ("smart", dict(width=64, height=64, smart=True), 64, 64, "jpeg"),
    ("proportional-width", dict(width=0, height=60), 80, 60, "jpeg"),
    ("flip", dict(width=-100, height=50), 100, 50, "jpeg"),
    ("crop-then-resize", dict(width=50, height=50, crop=((10, 10), (110, 110))), 50, 50, "jpeg"),
    ("gravity", dict(width=100, height=40, halign="left", valign="top"), 100, 40, "jpeg"),
    ("filters", dict(width=90, height=60, filters=["quality(70)", "format(webp)", "grayscale()"]), 90, 60, "webp"),
    ("png", dict(width=30, height=20, filters=["format(png)"]), 30, 20, "png"),
]

crypto = CryptoURL(key=THUMBOR_KEY)
thumbor = []
for name, options, width, height, fmt in thumbor_cases:
    options = dict(options, image_url=f"{ORIGIN}/photo.jpg")
    thumbor.append(dict(name=name, path=crypto.generate(**options), width=width, height=height, format=fmt))
unsafe = crypto.generate(width=40, height=30, unsafe=True, image_url=f"{ORIGIN}/photo.jpg")

# pyimgproxy requires a base URL; the fixtures keep the path only.
proxy = ImgProxy(url="http://osprey.invalid", key=IMGPROXY_KEY, salt=IMGPROXY_SALT)
imgproxy_cases = [
    ("fill", proxy.image(f"{ORIGIN}/photo.jpg").resize("fill", 120, 80), 120, 80, "jpeg"),
    ("fit", proxy.image(f"{ORIGIN}/photo.jpg").resize("fit", 100, 100), 100, 75, "jpeg"),
    ("size-format", proxy.image(f"{ORIGIN}/photo.jpg").size(50, 50).resizing_type("fill").format("png"), 50, 50, "png"),
    ("base64-source", proxy.image(f"{ORIGIN}/photo.jpg?v=1").width(60).quality(60), 60, 45, "jpeg"),
    ("blur-sharpen", proxy.image(f"{ORIGIN}/photo.jpg").resize("force", 33, 44).blur(2).sharpen(1), 33, 44, "jpeg"),
]
imgproxy = []
for name, image, width, height, fmt in imgproxy_cases:
    imgproxy.append(dict(name=name, path=image.url[len("http://osprey.invalid"):], width=width, height=height, format=fmt))

print(json.dumps(dict(
    generator="Tests/OspreyServerTests/Fixtures/make_fixtures.py",
    libthumbor=getattr(libthumbor, "__version__", "2.0.2"),
    origin_port=ORIGIN_PORT,
    thumbor_key=THUMBOR_KEY,
    imgproxy_key=IMGPROXY_KEY,
    imgproxy_salt=IMGPROXY_SALT,
    thumbor=thumbor,
    thumbor_unsafe=unsafe,
    imgproxy=imgproxy,
), indent=2))
