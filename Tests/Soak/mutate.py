"""Deterministic mutations of test images for fuzzing the decoders through the server.

`mutate(data, seed)` returns the same bytes for the same input and seed: bit flips anywhere,
byte changes in the header region, truncations, and header fields that lie about the image's
size (PNG IHDR with its CRC fixed, JPEG SOF, GIF screen descriptor, WebP VP8X canvas).
"""
import random
import struct
import zlib

KINDS = ("bitflip", "header", "truncate", "size-lie", "splice")


def _png_size_lie(data, rng):
    at = data.find(b"IHDR")
    if at < 4:
        return None
    w, h = rng.choice([(0, 1), (1, 0), (65535, 65535), (2**31 - 1, 1), (40000, 40000), (1, 2**31 - 1), (7, 3)])
    body = struct.pack(">II", w, h) + data[at + 12:at + 17]
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + body) & 0xFFFFFFFF)
    return data[:at + 4] + body + crc + data[at + 21:]


def _jpeg_size_lie(data, rng):
    for marker in (b"\xff\xc0", b"\xff\xc2", b"\xff\xc1"):
        at = data.find(marker)
        if at > 0:
            h, w = rng.choice([(0, 0), (65535, 65535), (1, 65535), (60000, 60000), (7, 3)])
            return data[:at + 5] + struct.pack(">HH", h, w) + data[at + 9:]
    return None


def _gif_size_lie(data, rng):
    if not data.startswith(b"GIF"):
        return None
    w, h = rng.choice([(0, 0), (65535, 65535), (1, 1)])
    return data[:6] + struct.pack("<HH", w, h) + data[10:]


def _webp_size_lie(data, rng):
    at = data.find(b"VP8X")
    if at < 0:
        at = data.find(b"VP8 ")
        if at < 0:
            return None
        # VP8 key frame: width/height (14 bits each) 6 bytes after the start code, 10 after the tag+size.
        w, h = rng.choice([(16383, 16383), (0, 0), (1, 16383)])
        return data[:at + 14] + struct.pack("<HH", w, h) + data[at + 18:]
    w, h = rng.choice([(2**24 - 1, 2**24 - 1), (0, 0), (40000, 40000)])
    return data[:at + 12] + w.to_bytes(3, "little") + h.to_bytes(3, "little") + data[at + 18:]


def mutate(data: bytes, seed: int) -> tuple[str, bytes]:
    """Returns (kind, mutated bytes) for `seed`; the same inputs always give the same output."""
    rng = random.Random(seed)
    kind = KINDS[seed % len(KINDS)]
    buf = bytearray(data)
    if kind == "bitflip":
        for _ in range(rng.randint(1, 24)):
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        return kind, bytes(buf)
    if kind == "header":
        for _ in range(rng.randint(1, 6)):
            i = rng.randrange(min(len(buf), 512))
            buf[i] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
        return kind, bytes(buf)
    if kind == "truncate":
        return kind, bytes(buf[:rng.randrange(1, len(buf))])
    if kind == "size-lie":
        for lie in (_png_size_lie, _jpeg_size_lie, _gif_size_lie, _webp_size_lie):
            out = lie(data, rng)
            if out is not None:
                return kind, out
        return "truncate", bytes(buf[:len(buf) // 2])
    # splice: a copy of a random slice inserted elsewhere (repeated chunks, overlapping segments).
    a = rng.randrange(len(buf))
    b = min(len(buf), a + rng.randint(1, 4096))
    at = rng.randrange(len(buf))
    return kind, bytes(buf[:at] + buf[a:b] + buf[at:])
