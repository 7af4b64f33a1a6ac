#!/usr/bin/env python3
"""A fresh ext4 file system for a benchmark run's scratch files (caches, the peer's and thumbor's files).

    python3 Benchmarks/scratchfs.py up PARENT     # makes it, prints the directory to use
    python3 Benchmarks/scratchfs.py down DIR      # unmounts and removes it (or the plain directory)

The Python benchmark scripts call `up` and `down` themselves; `run.sh` calls this script.

Why: these machines' root file system is ext4 mounted without a journal, and there ext4's inode
allocator looks up, and skips, every inode freed in the last minutes before it hands out a new one
(`find_inode_bit` -> `recently_deleted`). After a benchmark deletes its scratch, or one
participant's cache before the next participant runs, each new file costs 300-1200 us of CPU
instead of 25-60 us, for minutes, and that lands on whoever runs next, most on whoever writes
the most files (Osprey stores the original and the result of a miss; thumbor and the Pillow
script one file each). `results/2026-11-25-scratch-fs.txt` has the measurements.

What `up` makes: a sparse image file of SIZE_GB beside the directory, formatted by mkfs.ext4 with
its defaults (a journal, as a user's disk has) and loop-mounted there. Each run starts clean, and
removing the image afterwards frees one inode of the root file system. Needs root, mkfs.ext4 and
a loop device; without them `up` makes a plain directory under PARENT and says so on stderr.
"""
import os
import shutil
import subprocess
import sys
import tempfile

SIZE_GB = 24


def _run(argv):
    return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def up(parent, prefix="osprey-scratch."):
    """The directory for the run's scratch files: a fresh ext4 mounted there, or a plain directory."""
    directory = tempfile.mkdtemp(prefix=prefix, dir=parent)
    image = directory + ".img"
    reason = None
    if os.geteuid() != 0:
        reason = "not root"
    elif not shutil.which("mkfs.ext4"):
        reason = "no mkfs.ext4"
    else:
        with open(image, "wb") as f:
            f.truncate(SIZE_GB << 30)
        # Inode tables and journal written now, not by the kernel's lazy-init thread during the run.
        made = _run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", image])
        mounted = made.returncode == 0 and _run(["mount", "-o", "loop", image, directory])
        if made.returncode != 0:
            reason = f"mkfs.ext4 failed: {made.stderr.strip()}"
        elif mounted.returncode != 0:
            reason = f"mount failed: {mounted.stderr.strip()}"
    if reason:
        if os.path.exists(image):
            os.remove(image)
        print(f"scratchfs.py: {reason}; scratch files go to {directory} on the file system of {parent}: "
              "figures that create files can move with what was deleted there in the minutes before", file=sys.stderr)
        return directory
    return directory


def is_fresh(directory):
    """Whether `directory`, from `up`, is a file system of its own (not the fallback directory)."""
    return os.path.ismount(directory)


def down(directory):
    """Unmounts and removes what `up` made (the fallback directory is removed as a whole)."""
    if os.path.ismount(directory):
        _run(["umount", directory])
        if os.path.ismount(directory):
            _run(["umount", "-l", directory])
        if os.path.exists(directory + ".img"):
            os.remove(directory + ".img")
        os.rmdir(directory)
    else:
        shutil.rmtree(directory, ignore_errors=True)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("up", "down"):
        sys.exit("usage: scratchfs.py up PARENT | down DIR")
    if sys.argv[1] == "up":
        print(up(sys.argv[2]))
    else:
        down(sys.argv[2])


if __name__ == "__main__":
    main()
