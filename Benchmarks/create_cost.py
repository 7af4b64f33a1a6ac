#!/usr/bin/env python3
"""CPU per new file on a file system, before and after a mass deletion (see scratchfs.py).

    python3 Benchmarks/create_cost.py PARENT [--delete N] [--after 0,30,70,150] [--files 500]

Creates FILES files of 100 bytes in a new directory under PARENT and prints the process CPU
(user + system) per create; then creates and deletes N files (the cleanup of an earlier run) and
measures again at each delay in seconds after the deletion. Everything it made is removed at the end.
"""
import argparse
import os
import shutil
import tempfile
import time


def create(directory, count):
    os.makedirs(directory)
    start = time.process_time()
    for i in range(count):
        fd = os.open(os.path.join(directory, f"f{i}"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"x" * 100)
        os.close(fd)
    return (time.process_time() - start) / count * 1e6


def main():
    p = argparse.ArgumentParser()
    p.add_argument("parent")
    p.add_argument("--delete", type=int, default=3000)
    p.add_argument("--after", default="0,30,70,150")
    p.add_argument("--files", type=int, default=500)
    a = p.parse_args()
    base = tempfile.mkdtemp(prefix="create-cost.", dir=a.parent)
    try:
        print(f"{a.parent}: before any deletion: {create(os.path.join(base, 'quiet'), a.files):.0f} us CPU per create", flush=True)
        create(os.path.join(base, "deleted"), a.delete)
        shutil.rmtree(os.path.join(base, "deleted"))
        deleted_at = time.monotonic()
        for delay in (float(x) for x in a.after.split(",")):
            time.sleep(max(0.0, delay - (time.monotonic() - deleted_at)))
            cost = create(os.path.join(base, f"after-{delay:g}"), a.files)
            print(f"{a.parent}: {time.monotonic() - deleted_at:.0f} s after deleting {a.delete} files: {cost:.0f} us CPU per create", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
