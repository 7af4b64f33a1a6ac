"""The interleaving, the ratios and the report of every comparison Benchmarks/ab.py runs (one
implementation for all of them), and the scratch file system a run's caches live on."""
import json
import os
import random
import shutil
import statistics as st
import subprocess
import sys
import tempfile
from datetime import datetime, timezone


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def rotated(sides, round_index):
    """The sides in this round's order: rotated by one every round."""
    k = round_index % len(sides)
    return sides[k:] + sides[:k]


def spread(values, fmt="{:.2f}"):
    """median [min..max]"""
    return f"{fmt.format(st.median(values))} [{fmt.format(min(values))}..{fmt.format(max(values))}]" if values else "-"


def bootstrap(ratios):
    """95% bootstrap interval of the median ratio."""
    rng = random.Random(1)
    boots = sorted(st.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    return boots[int(0.025 * len(boots))], boots[int(0.975 * len(boots)) - 1]


# MARK: scratch file system

def scratch_up(parent, prefix="osprey-scratch."):
    """A fresh ext4 (sparse 24 GB image, loop-mounted) for a run's caches, or a plain directory
    when not root. On an ext4 without a journal, as these machines' root file system is, files made
    in the minutes after a mass deletion cost 10-40x the CPU, which charged one participant for
    the previous one's cleanup (results/2026-11-25-scratch-fs.txt)."""
    directory = tempfile.mkdtemp(prefix=prefix, dir=parent)
    image, reason = directory + ".img", "not root" if os.geteuid() != 0 else None
    if not reason:
        with open(image, "wb") as f:
            f.truncate(24 << 30)
        for argv in (["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", image], ["mount", "-o", "loop", image, directory]):
            done = subprocess.run(argv, capture_output=True, text=True)
            if done.returncode != 0:
                reason = f"{argv[0]} failed: {done.stderr.strip()}"
                os.remove(image)
                break
    if reason:
        log(f"ab.py scratch: {reason}; scratch files on the file system of {parent}, not a fresh one")
    return directory


def scratch_down(directory):
    if os.path.ismount(directory):
        if subprocess.run(["umount", directory]).returncode != 0:
            subprocess.run(["umount", "-l", directory])
        os.remove(directory + ".img")
        os.rmdir(directory)
    else:
        shutil.rmtree(directory, ignore_errors=True)


# MARK: the one interleaving and ratio implementation

def interleave(rounds, cases, measure):
    """Runs `measure(case, participant, round)` (a dict with `rate`, higher is better, and
    optionally `cpu_ms` per item) for every participant of every case, round after round, the
    participants' order rotating; returns every run, tagged."""
    runs = []
    for r in range(rounds):
        log(f"round {r + 1}/{rounds} (load {os.getloadavg()[0]:.2f})")
        for case, participants in cases:
            for who in rotated(participants, r):
                result = measure(case, who, r)
                result.update(case=case, participant=who, round=r)
                log(f"  {case:24} {who:28} {result['rate']:10.1f}/s" + (f"  cpu {result['cpu_ms']:.2f} ms" if "cpu_ms" in result else "")
                    + (f"  INVALID: {result.get('why', '')}" if result.get("invalid") else ""))
                runs.append(result)
    return runs


def ratios(runs, case, subject, baseline, key="rate", invert=False):
    """Per-round ratios subject/baseline of `key` (baseline/subject with `invert`), valid runs only."""
    by = {(r["participant"], r["round"]): r for r in runs if r["case"] == case and not r.get("invalid")}
    out = []
    for (who, rnd), x in sorted(by.items(), key=lambda i: i[0][1]):
        y = by.get((baseline, rnd))
        if who == subject and y and x.get(key) and y.get(key):
            out.append(y[key] / x[key] if invert else x[key] / y[key])
    return out


def report(title, runs, pairs, notes=(), out_txt=None, out_json=None, extra=(), key=None):
    """The ratio table of `pairs` (case, subject, baseline, goal), the per-run figures and notes.
    The ratio is of the rates (higher is better), or with `key` of that figure (lower is better)."""
    lines = [f"# {title} — {datetime.now(timezone.utc):%Y-%m-%dT%H:%MZ}, {os.cpu_count()} cores, load at the end "
             + " ".join(f"{x:.2f}" for x in os.getloadavg()), "",
             f"| case | subject | baseline | {key or 'rate'} ratio, median [min..max] | CPU per item, baseline / subject | goal | met |",
             "|---|---|---|---|---|---|---|"]
    for case, subject, baseline, goal in pairs:
        rate = ratios(runs, case, subject, baseline, key or "rate")
        if rate:
            met = "-" if goal is None else ("yes" if (st.median(rate) <= goal if key else st.median(rate) >= goal) else "**no**")
            cpu = ratios(runs, case, subject, baseline, "cpu_ms", True)
            lines.append(f"| {case} | {subject} | {baseline} | {spread(rate)}× | {spread(cpu) + '×' if cpu else '-'} | "
                         f"{'-' if goal is None else f'{chr(8804) if key else chr(8805)} {goal}×'} | {met} |")
    lines += ["", "Per run (rate per second; CPU ms per item; p50 / p99 ms):"]
    for r in runs:
        lat = f"  p50 {r['p50_us'] / 1000:.1f} p99 {r['p99_us'] / 1000:.1f}" if "p50_us" in r else ""
        lines.append(f"  round {r['round'] + 1} {r['case']} / {r['participant']}: {r['rate']:.1f}"
                     + (f"  cpu {r['cpu_ms']:.2f}" if "cpu_ms" in r else "") + lat + (f"  INVALID: {r.get('why', '')}" if r.get("invalid") else ""))
    lines += list(extra) + [f"note: {n}" for n in notes]
    text = "\n".join(lines) + "\n"
    print(text)
    if out_txt:
        with open(out_txt, "w") as f:
            f.write(text)
    if out_json:
        with open(out_json, "w") as f:
            json.dump(dict(title=title, cores=os.cpu_count(), notes=list(notes), runs=runs), f, indent=1, default=str)


def images(directory, skip=(".gif",)):
    return [n for n in sorted(os.listdir(directory)) if not n.startswith(".") and not n.endswith(skip)]
