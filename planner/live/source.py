"""Where snapshots come from: the Slurm client commands on PATH, or slurmrestd.

    CliSource(env=None, timeout_s=20)   runs `sinfo --json` and `squeue --json` (read-only commands)
    RestSource(url, token=None)         GET <url>/slurm/<version>/nodes and /jobs; the newest API
                                        version the daemon answers is found once (feature detection)
    source.poll() -> Snapshot           raises SlurmUnreachable (one line) when Slurm does not answer

Both only read. `sacct` is tried once per process (`sacct_probe`): a site without an accounting
database answers with an error, which is reported once and never stops the polling (snapshots come
from sinfo/squeue alone).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import time
import urllib.parse
from dataclasses import dataclass, field

from planner.logs import slurm_json

REST_VERSIONS = ("v0.0.41", "v0.0.40", "v0.0.39", "v0.0.38")


class SlurmUnreachable(Exception):
    """Slurm did not answer (controller down, command missing, HTTP error): a one-line reason."""


@dataclass
class Snapshot:
    t_s: float
    nodes: list  # [slurm_json.NodeRow]
    jobs: list  # [slurm_json.JobRow]
    meta: dict = field(default_factory=dict)  # {"sinfo": meta, "squeue": meta, "source": ...}
    poll_s: float = 0.0


def _one_line(text: str, limit: int = 300) -> str:
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return (lines[-1] if lines else "")[:limit]


class CliSource:
    """The Slurm client commands (sinfo, squeue, sacct) on PATH, with the environment given (e.g.
    SLURM_CONF of a test cluster)."""

    def __init__(self, env: dict | None = None, timeout_s: float = 20.0):
        self.env = dict(os.environ)
        if env:
            self.env.update(env)
        self.timeout_s = timeout_s
        self.describe = "slurm client commands" + (f" (SLURM_CONF={env['SLURM_CONF']})"
                                                    if env and "SLURM_CONF" in env else "")

    def _json(self, argv: list[str], empty_ok: bool = False) -> dict:
        try:
            r = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=self.timeout_s)
        except FileNotFoundError:
            raise SlurmUnreachable(f"{argv[0]} not found on PATH (install the Slurm client)") from None
        except subprocess.TimeoutExpired:
            raise SlurmUnreachable(f"{' '.join(argv)} did not answer within {self.timeout_s:g} s") from None
        if r.returncode != 0:
            raise SlurmUnreachable(f"{' '.join(argv)} failed (exit {r.returncode}): "
                                   f"{_one_line(r.stderr) or _one_line(r.stdout)}")
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            raise SlurmUnreachable(f"{' '.join(argv)} printed no JSON: {_one_line(r.stdout)}") from None
        errs = slurm_json.errors(doc)
        if errs and not (doc.get("nodes") or doc.get("jobs")) and not (empty_ok and "jobs" in doc):
            raise SlurmUnreachable(f"{' '.join(argv)}: {errs[0][:200]}")
        return doc

    def poll(self) -> Snapshot:
        c0 = time.perf_counter()
        nd = self._json(["sinfo", "--json"])
        t = time.time()  # the snapshot's time: when sinfo answered (node states are as of then)
        jd = self._json(["squeue", "--json"])
        return Snapshot(t_s=t, nodes=slurm_json.nodes(nd), jobs=slurm_json.jobs(jd),
                        meta={"source": "cli", "sinfo": slurm_json.meta(nd), "squeue": slurm_json.meta(jd)},
                        poll_s=time.perf_counter() - c0)

    def sacct_probe(self) -> str | None:
        """None when `sacct --json` works here, else the one-line reason it does not."""
        try:
            # an accounting database with no job in the last minute answers "Nothing found": it works
            self._json(["sacct", "--json", "-X", "-S", "now-1minutes"], empty_ok=True)
            return None
        except SlurmUnreachable as e:
            return str(e)

    def run(self, argv: list[str]) -> subprocess.CompletedProcess:
        """Run one Slurm command (only for --execute)."""
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=self.timeout_s)


class RestSource:
    """slurmrestd at http(s)://host:port[/prefix] or unix:/path/to/socket: the first of
    REST_VERSIONS that answers is used from then on. A JWT token (if the site uses auth/jwt) comes
    from `token` or $SLURM_JWT; the user name from $USER."""

    def __init__(self, url: str, token: str | None = None, timeout_s: float = 20.0):
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("SLURM_JWT")
        self.timeout_s = timeout_s
        self.version: str | None = None
        self.describe = f"slurmrestd at {self.url}"

    def _get(self, path: str) -> dict:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["X-SLURM-USER-TOKEN"] = self.token
            headers["X-SLURM-USER-NAME"] = os.environ.get("USER", "")
        try:
            if self.url.startswith("unix:"):  # slurmrestd on a UNIX socket (rest_auth/local)
                conn = http.client.HTTPConnection("localhost", timeout=self.timeout_s)
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(self.timeout_s)
                sock.connect(self.url[len("unix:"):])
                conn.sock = sock
                base = ""
            else:
                u = urllib.parse.urlsplit(self.url)
                cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
                conn = cls(u.hostname, u.port, timeout=self.timeout_s)
                base = u.path.rstrip("/")
            try:
                conn.request("GET", base + path, headers=headers)
                r = conn.getresponse()
                body = r.read()
            finally:
                conn.close()
        except (OSError, http.client.HTTPException) as e:
            raise SlurmUnreachable(f"slurmrestd at {self.url} not reachable: {e}") from None
        if r.status != 200:
            raise SlurmUnreachable(f"slurmrestd {path}: HTTP {r.status} {r.reason}")
        try:
            return json.loads(body.decode("utf-8"))
        except ValueError:
            raise SlurmUnreachable(f"slurmrestd {path} answered no JSON") from None

    def _detect(self) -> str:
        last = None
        for v in REST_VERSIONS:
            try:
                self._get(f"/slurm/{v}/ping")
                return v
            except SlurmUnreachable as e:
                last = e
                if "not reachable" in str(e):
                    raise
        raise SlurmUnreachable(f"slurmrestd at {self.url} answers none of {', '.join(REST_VERSIONS)} ({last})")

    def poll(self) -> Snapshot:
        c0 = time.perf_counter()
        if self.version is None:
            self.version = self._detect()
        nd = self._get(f"/slurm/{self.version}/nodes")
        t = time.time()
        jd = self._get(f"/slurm/{self.version}/jobs")
        return Snapshot(t_s=t, nodes=slurm_json.nodes(nd), jobs=slurm_json.jobs(jd),
                        meta={"source": "rest", "version": self.version, "sinfo": slurm_json.meta(nd),
                              "squeue": slurm_json.meta(jd)}, poll_s=time.perf_counter() - c0)

    def sacct_probe(self) -> str | None:
        try:
            self._get(f"/slurmdb/{self.version or REST_VERSIONS[-1]}/jobs")
            return None
        except SlurmUnreachable as e:
            return str(e)
