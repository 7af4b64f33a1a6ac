"""The participants of the server comparisons that Benchmarks/ab.py runs: nginx (origin and static
ceiling), `osprey serve`, thumbor 7.8, moto's S3 server, and one wrk run against any of them.
No timing loop lives here: ab.py interleaves the runs and computes the ratios."""
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WRK_PATHS = os.path.join(HERE, "wrk-paths.lua")
WRK_UPLOAD = os.path.join(HERE, "wrk-upload.lua")
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=60, data=None, headers=None, method=None):
    """(status, content type, body) of a request; HTTP errors become their status."""
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def cpu_seconds(pid, task=None):
    """utime + stime of a process (or one of its threads), in seconds."""
    path = f"/proc/{pid}/task/{task}/stat" if task else f"/proc/{pid}/stat"
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def peak_rss_mb(pid):
    """The process's peak resident set (VmHWM), in MB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(l.split()[1]) / 1024 for l in f if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return float("nan")


class Server:
    """A server process on a loopback port, ready once `probe` answers 200."""

    def __init__(self, argv, port, probe, log_dir, env=None):
        self.argv, self.port = argv, port
        env = dict(env or os.environ)
        env.pop("VIPS_CONCURRENCY", None)  # the servers size their own pools
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env,
                                        stderr=open(os.path.join(log_dir, os.path.basename(argv[0]) + ".log"), "ab"))
        deadline = time.time() + 60
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{argv[0]} exited with {self.process.returncode} before it was ready")
            try:
                if http_get(f"http://127.0.0.1:{port}{probe}", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError(f"{argv[0]} not ready on {probe} after 60 s")
            time.sleep(0.1)

    @property
    def pid(self):
        return self.process.pid

    def get(self, path, **kw):
        return http_get(f"http://127.0.0.1:{self.port}{path}", **kw)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Nginx(Server):
    """nginx with `locations` (location blocks) in its server block; `access_log` counts requests."""

    def __init__(self, scratch, name, locations, probe, workers=1, access_log=False):
        d = os.path.join(scratch, name)
        os.makedirs(d, exist_ok=True)
        self.access_log = os.path.join(d, "access.log")
        port = free_port()
        with open(os.path.join(d, "nginx.conf"), "w") as f:
            f.write(f"""{"user root;" if os.getuid() == 0 else ""}
worker_processes {workers};
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    {f"access_log {self.access_log};" if access_log else "access_log off;"}
    sendfile on; tcp_nopush on; tcp_nodelay on;
    keepalive_requests 1000000; keepalive_timeout 120s;
    open_file_cache max=1000 inactive=60s;
    client_body_temp_path {d}/body; proxy_temp_path {d}/proxy;
    types {{ image/jpeg jpg jpeg; image/png png; image/gif gif; image/webp webp; image/avif avif; image/tiff tif tiff; }}
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
{locations}
    }}
}}
""")
        nginx = next(p for p in ("/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK))
        super().__init__([nginx, "-e", f"{d}/error.log", "-p", d, "-c", f"{d}/nginx.conf"], port, probe, d)

    def requests(self):
        """Requests logged so far (with access_log)."""
        try:
            with open(self.access_log, "rb") as f:
                return sum(1 for _ in f)
        except OSError:
            return 0


def osprey(binary, scratch, cache_dir, *flags, env=None):
    """`osprey serve` on a free port with `cache_dir`, loopback sources allowed."""
    port = free_port()
    argv = [binary, "serve", "--host", "127.0.0.1", "--port", str(port), "--allow-loopback-sources", "--cache-dir", cache_dir, *flags]
    return Server(argv, port, "/health", scratch, env)


def thumbor(binary, scratch, storage, cores, uploads=False):
    """thumbor 7.8 as documented for production, minus result storage, one process."""
    port = free_port()
    conf = f"{storage}.conf"
    with open(conf, "w") as f:
        f.write(f"ENGINE_THREADPOOL_SIZE = {cores}\nRESULT_STORAGE = None\nSTORAGE = 'thumbor.storages.file_storage'\n"
                f"FILE_STORAGE_ROOT_PATH = '{storage}'\nLOADER = 'thumbor.loaders.http_loader'\nALLOW_UNSAFE_URL = True\n"
                f"QUALITY = 80\nWEBP_QUALITY = 80\nUPLOAD_ENABLED = {uploads}\n")
    return Server([binary, "--ip", "127.0.0.1", "--port", str(port), "--conf", conf, "--log-level", "error"],
                  port, "/healthcheck", scratch)


def moto(scratch, buckets):
    """moto's S3 server (the venv of scripts/s3-venv.sh, signatures checked) with `buckets`; (server,
    endpoint, environment with its keys, venv)."""
    venv = subprocess.run(["bash", os.path.join(ROOT, "scripts", "s3-venv.sh")], check=True, capture_output=True,
                          text=True).stdout.strip()
    port = free_port()
    server = Server([f"{venv}/bin/moto_server", "-H", "127.0.0.1", "-p", str(port)], port, "/moto-api/", scratch,
                    dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="3"))
    endpoint = f"http://127.0.0.1:{port}"
    keys = json.loads(subprocess.run([f"{venv}/bin/python", os.path.join(ROOT, "Tests", "S3", "moto_setup.py"), endpoint, *buckets],
                                     check=True, capture_output=True, text=True).stdout)
    env = dict(os.environ, AWS_ACCESS_KEY_ID=keys["accessKeyID"], AWS_SECRET_ACCESS_KEY=keys["secretAccessKey"])
    return server, endpoint, env, venv


def wrk(server, paths, mode, seconds, scratch, threads=2, connections=8, check=False, script=WRK_PATHS, origin=None):
    """One wrk run over `paths` (wrk-upload.lua: files to POST), "unique" giving each request a new
    `{u}` token: rate, latency percentiles (µs), the server's CPU ms per request, the origin's
    fetches, peak RSS, and `invalid` when any answer was an error."""
    tag = str(time.monotonic_ns())  # makes the "unique" tokens of this run unlike any other run's
    listing = os.path.join(scratch, f"paths-{tag}.txt")
    with open(listing, "w") as f:
        f.write("\n".join(paths) + "\n")
    argv = ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{seconds}s", "--timeout", "30s", "-s", script,
            f"http://127.0.0.1:{server.port}", "--", listing, mode, tag]
    fetched, cpu = origin.requests() if origin else None, cpu_seconds(server.pid)
    out = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, WRK_CHECK="1" if check else "0"),
                         timeout=seconds + 120)
    line = next((l for l in out.stdout.splitlines() if l.startswith("{")), None)
    if out.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed ({out.returncode}): {out.stdout[-2000:]} {out.stderr[-2000:]}")
    r = json.loads(line)
    n = max(r["requests"], 1)
    non2xx = next((l for l in out.stdout.splitlines() if "Non-2xx" in l), None)
    r.update(rate=r["requests"] / r["seconds"], cpu_ms=(cpu_seconds(server.pid) - cpu) * 1000 / n, peak_rss_mb=peak_rss_mb(server.pid),
             non2xx=int(non2xx.split(":")[1]) if non2xx else 0, command=" ".join(argv[:-4] + ["--", "PATHS", mode]))
    r["origin_fetches"] = origin.requests() - fetched if origin else None
    errors = r["non2xx"] + r["bad"] + r["timeouts"] + r["status_errors"]
    r["invalid"] = bool(errors or r["requests"] == 0 or (mode == "unique" and origin and r["origin_fetches"] < r["requests"]))
    if r["invalid"]:
        r["why"] = f"{r['requests']} answers, {errors} errors (non-2xx {r['non2xx']}, bad {r['bad']}), origin fetches {r['origin_fetches']}"
    return r


def sequential(server, paths):
    """`paths` asked one after another (each must answer 200): rate and CPU ms per request."""
    cpu, started = cpu_seconds(server.pid), time.perf_counter()
    for path in paths:
        status, _, body = server.get(path)
        if status != 200:
            raise RuntimeError(f"{path}: {status} {body[:200]!r}")
    seconds = time.perf_counter() - started
    return dict(rate=len(paths) / seconds, ms=1000 * seconds / len(paths), cpu_ms=1000 * (cpu_seconds(server.pid) - cpu) / len(paths))


def metrics(server, prefix):
    """`name{label="X"} value` lines of /metrics starting with `prefix`, as {X: value}."""
    text = server.get("/metrics")[2].decode()
    return {l.split('"')[1]: float(l.split()[-1]) for l in text.splitlines() if l.startswith(prefix)}
