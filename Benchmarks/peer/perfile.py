#!/usr/bin/env python3
"""The peer's image work per file, to set beside `OspreyBench perfile DIR`.

For every image in DIR: the median process CPU time (ms, 15 rounds) of what peer.py does to the
bytes once they are fetched: Pillow open + thumbnail to fit 256x256 + EXIF transpose + RGB +
JPEG q80 encode, in memory. Usage: python perfile.py DIR [ROUNDS]
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer import thumbnail as work  # noqa: E402 - the peer's own image work, not a copy of it


def main():
    directory = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    total = 0.0
    print("file | Pillow cpu ms")
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        try:
            work(data)
        except Exception as error:  # noqa: BLE001 - report and go on, as peer.py's --probe does
            print(f"{name} | error: {error}")
            continue
        samples = []
        for _ in range(rounds):
            start = time.process_time()
            work(data)
            samples.append((time.process_time() - start) * 1000)
        median = statistics.median(samples)
        total += median
        print(f"{name} | {median:.2f}")
    print(f"total | {total:.2f}")


if __name__ == "__main__":
    main()
