"""Samples the server every second (RSS, open file descriptors, threads, in-flight and queued jobs
from /metrics, /health status) and draws the curves to a PNG."""
import http.client
import os
import re
import threading
import time


def proc_status(pid):
    """(rss MiB, threads) from /proc/PID/status."""
    rss = threads = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, threads


def cpu_seconds(pid):
    """User + system CPU seconds of the process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def get(port, path, timeout=3):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read().decode(errors="replace")
    except (OSError, http.client.HTTPException) as error:
        return None, repr(error)
    finally:
        conn.close()


def gauge(text, name):
    m = re.search(rf"^{name}(?:{{[^}}]*}})? ([0-9.eE+-]+)$", text, re.M)
    return float(m.group(1)) if m else None


def counters(text, name):
    """{labels: value} of a counter family."""
    return {m.group(1) or "": float(m.group(2)) for m in re.finditer(rf"^{name}(?:{{([^}}]*)}})? ([0-9.eE+-]+)$", text, re.M)}


class Sampler(threading.Thread):
    def __init__(self, pid, port, interval=1.0):
        super().__init__(daemon=True)
        self.pid, self.port, self.interval = pid, port, interval
        self.samples = []
        self.phase = "idle"
        self.stopped = threading.Event()
        self.t0 = time.monotonic()

    def sample(self):
        t = time.monotonic() - self.t0
        try:
            rss, threads = proc_status(self.pid)
            fds = open_fds(self.pid)
        except OSError:
            return None
        status, text = get(self.port, "/metrics")
        health, reason = get(self.port, "/health")
        s = {"t": round(t, 2), "phase": self.phase, "rss_mb": round(rss, 1), "fds": fds, "threads": threads,
             "in_flight": gauge(text, "osprey_in_flight_requests") if status == 200 else None,
             "queued": gauge(text, "osprey_queued_requests") if status == 200 else None,
             "load1": round(os.getloadavg()[0], 2), "cpu_s": cpu_seconds(self.pid),
             "health": health, "health_reason": reason.strip()[:120] if health != 200 else ""}
        self.samples.append(s)
        return s

    def run(self):
        while not self.stopped.is_set():
            self.sample()
            self.stopped.wait(self.interval)

    def stop(self):
        self.stopped.set()
        self.join(10)


def plot(samples, path, title, limits=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [s["t"] for s in samples]
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    a.plot(t, [s["rss_mb"] for s in samples], color="tab:blue", lw=1.2, label="RSS (MiB)")
    if limits:
        for label, value in limits.items():
            a.axhline(value, color="tab:red", ls="--", lw=0.8)
            a.text(t[0], value, " " + label, color="tab:red", va="bottom", fontsize=8)
    a.set_ylabel("RSS (MiB)")
    a.set_title(title, fontsize=10)
    a.grid(alpha=0.3)
    b.plot(t, [s["fds"] for s in samples], color="tab:green", lw=1, label="open fds")
    # A sample whose /metrics did not answer in 3 s is a gap (nan), not a zero.
    nan = float("nan")
    b.plot(t, [nan if s["in_flight"] is None else s["in_flight"] for s in samples], color="tab:orange", lw=1, label="in flight")
    b.plot(t, [nan if s["queued"] is None else s["queued"] for s in samples], color="tab:purple", lw=1, label="queued gauge")
    unhealthy = [s["t"] for s in samples if s["health"] != 200]
    if unhealthy:
        b.scatter(unhealthy, [0] * len(unhealthy), color="tab:red", s=6, label="/health not 200 in 3 s", zorder=3)
    b.set_xlabel("seconds")
    b.legend(fontsize=8, loc="upper right", ncol=4)
    b.grid(alpha=0.3)
    # Phase boundaries.
    last = None
    for s in samples:
        if s["phase"] != last:
            for ax in (a, b):
                ax.axvline(s["t"], color="grey", lw=0.6, ls=":")
            a.text(s["t"], a.get_ylim()[1], " " + s["phase"], fontsize=7, va="top", color="grey")
            last = s["phase"]
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
