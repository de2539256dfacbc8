"""Run the app as a real server in a subprocess (browser test, security test, app and load
benchmarks), and the small SWF those uploads use. Loopback only."""

from __future__ import annotations

import gzip
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from planner import paths

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def small_swf(n_jobs: int = 300) -> str:
    """The header and first n_jobs jobs of the shipped KTH SP2 log, as text."""
    out, jobs = [], 0
    with gzip.open(paths.DATASETS / "KTH-SP2-1996-2.1-cln.swf.gz", "rt") as fh:
        for line in fh:
            if not line.startswith(";"):
                jobs += 1
                if jobs > n_jobs:
                    break
            out.append(line)
    return "".join(out)


def swf_file(path: Path, mib: int) -> Path:
    """An SWF of about `mib` MiB written to path: the header and rows of the shipped KTH log, repeated."""
    head = small_swf(300)
    rows = "".join(ln + "\n" for ln in head.splitlines() if ln and not ln.startswith(";"))
    with open(path, "w") as fh:
        fh.write(head)
        while fh.tell() < mib * 2**20:
            fh.write(rows)
    return Path(path)


class RssSampler:
    """The peak RSS (bytes) of one process, sampled every `every_s` by a thread while in the block."""

    def __init__(self, pid: int, every_s: float = 0.02):
        import psutil

        self.proc, self.every_s, self.peak, self.samples = psutil.Process(pid), every_s, 0, 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        import psutil

        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, self.proc.memory_info().rss)
                self.samples += 1
            except psutil.Error:
                return
            time.sleep(self.every_s)

    def __enter__(self) -> "RssSampler":
        self._t.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._t.join(5)


class AppServer:
    """`streamlit run app.py` on a free 127.0.0.1 port with its own database and session dir.

    Use as a context manager; `url` is set once /_stcore/health answers 200. `startup_s` is the
    time from spawning to healthy.
    """

    def __init__(self, workdir: Path, db: Path, timeout_s: float = 90.0, extra_env: dict | None = None,
                 app: Path | None = None):
        self.workdir, self.db, self.timeout_s = Path(workdir), Path(db), timeout_s
        self.app = Path(app) if app is not None else paths.ROOT / "app.py"  # another script: a baseline
        self.env = dict(os.environ, PLANNER_DB=str(db), PLANNER_SESSIONS_DIR=str(self.workdir / "sessions"),
                        **(extra_env or {}))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.workdir / f"streamlit-{self.port}.log"
        self.proc = None
        self.startup_s = None

    def __enter__(self) -> "AppServer":
        self.log = open(self.log_path, "w")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(self.app), "--server.headless", "true",
             "--server.port", str(self.port), "--server.address", "127.0.0.1",
             "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
            cwd=paths.ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + self.timeout_s
        while not self.healthy(timeout_s=2):
            if self.proc.poll() is not None or time.time() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError("streamlit did not start:\n" + self.log_path.read_text()[-3000:])
            time.sleep(0.1)
        self.startup_s = time.perf_counter() - t0
        return self

    def healthy(self, timeout_s: float = 3) -> bool:
        """Whether /_stcore/health answers 200."""
        try:
            return urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=timeout_s).status == 200
        except OSError:
            return False

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()
