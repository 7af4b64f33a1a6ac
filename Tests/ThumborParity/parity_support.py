"""What both thumbor parity scripts need: a free loopback port and a wait for a server to answer."""
import os
import socket
import sys
import time
import urllib.error
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url, process, seconds=60):
    """Returns once `url` answers; exits naming the calling script when `process` ends or `seconds` pass."""
    name = os.path.basename(sys.argv[0])
    deadline = time.time() + seconds
    while time.time() < deadline:
        if process.poll() is not None:
            sys.exit(f"{name}: {url}: the server exited ({process.returncode})")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    sys.exit(f"{name}: {url} not ready after {seconds} s")
