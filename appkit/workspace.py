"""Workspaces: one user's logs, runs and scenario on the server, found by an unguessable token.

Pure (no Streamlit): the pages reach it through appkit.session; the tests call it directly.

A workspace is a private directory (mode 0700, files 0600) named by its token, a
`secrets.token_urlsafe(24)` (32 URL-safe characters, 192 random bits), carried in the URL as
`ws=<token>`. Whoever has the link sees the same logs and results; nobody can list or guess
another workspace. Layout:

    <root>/<token>/meta.json              created, last scenario, last result, warm-up choices
    <root>/<token>/uploads/<uuid>.<ext>   the uploaded files as received
    <root>/<token>/logs/<name>.duckdb     one DuckDB file per loaded log (written once, by the
                                          loading worker, renamed into place when complete)
    <root>/<token>/runs/<result id>/      a Planner run: scenario.json, summary.json, parquet tables
    <root>/<token>/jobs/<job id>/         scratch of a worker (spec, progress, error)

Limits (env, documented in docs/app.md): a workspace idle for PLANNER_WORKSPACE_DAYS days
(default 14) is removed when the server starts or a new workspace is made; the files of one
workspace may take at most PLANNER_WORKSPACE_QUOTA_MB (default 2048) MiB: a load or run that
would pass it is refused with one line. One address may open PLANNER_NEW_WORKSPACES_PER_HOUR
(default 30) new workspaces an hour, and the server holds at most PLANNER_MAX_WORKSPACES (default
5000): a visit without a link is refused beyond them (admit_new).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from planner.errors import InputError

TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{32}$")
RESULT_RE = re.compile(r"^[0-9a-f]{16}$")
LOG_FILE_RE = re.compile(r"^[A-Za-z0-9._-]{1,80}$")
TABLES = ("timeline", "trainers", "decisions", "preemptions")
DIR_MODE = 0o700
FILE_MODE = 0o600


def idle_days() -> float:
    return float(os.environ.get("PLANNER_WORKSPACE_DAYS", "14"))


def quota_bytes() -> int:
    return int(float(os.environ.get("PLANNER_WORKSPACE_QUOTA_MB", "2048")) * 2**20)


def new_token() -> str:
    return secrets.token_urlsafe(24)


def valid_token(token) -> bool:
    return isinstance(token, str) and bool(TOKEN_RE.match(token))


def private_dir(path: Path) -> Path:
    """mkdir -p with mode 0700 on every directory made (and on the leaf, whatever the umask)."""
    path = Path(path)
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    os.chmod(path, DIR_MODE)
    return path


def write_private(path: Path, data: bytes) -> Path:
    """Write a file readable by the server's user only (0600 from creation on)."""
    path = Path(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(path, FILE_MODE)
    return path


def path(root: Path, token: str) -> Path:
    if not valid_token(token):
        raise InputError("not a workspace token", field="ws")
    return Path(root) / token


def exists(root: Path, token: str) -> bool:
    return valid_token(token) and (Path(root) / token / "meta.json").is_file()


def new_per_hour() -> int:
    return int(os.environ.get("PLANNER_NEW_WORKSPACES_PER_HOUR", "30"))


def max_workspaces() -> int:
    return int(os.environ.get("PLANNER_MAX_WORKSPACES", "5000"))


_CREATED: dict[str, list[float]] = {}  # client -> times (s) of the workspaces it made in the last hour
_CREATED_LOCK = threading.Lock()


def admit_new(root: Path, client: str | None, now_s: float | None = None) -> None:
    """InputError (one line) when `client` (an address) made new_per_hour() workspaces in the last
    hour, or the server holds max_workspaces() already: a visit without a link cannot fill the disk."""
    now_s = time.time() if now_s is None else now_s
    key = str(client or "unknown")
    with _CREATED_LOCK:
        recent = [t for t in _CREATED.get(key, []) if now_s - t < 3600.0]
        if len(recent) >= new_per_hour():
            _CREATED[key] = recent
            raise InputError(f"{len(recent)} new workspaces were opened from your address in the last hour "
                             f"(at most {new_per_hour()}); open your workspace's link (the ws= part of the "
                             "address) or try again later", field="workspace")
        root = Path(root)
        if root.is_dir() and sum(1 for d in root.iterdir() if valid_token(d.name)) >= max_workspaces():
            raise InputError(f"the server holds {max_workspaces():,} workspaces (its limit); open your "
                             "workspace's link or try again later", field="workspace")
        recent.append(now_s)
        _CREATED[key] = recent
        for k in [k for k, v in _CREATED.items() if not v or now_s - v[-1] >= 3600.0]:
            del _CREATED[k]  # the table stays as small as the last hour's clients


def create(root: Path, client: str | None = None) -> str:
    """A new empty workspace; returns its token. Idle workspaces are removed first. With `client`
    (the visitor's address), admit_new's caps apply."""
    expire(root)
    if client is not None:
        admit_new(root, client)
    token = new_token()
    d = private_dir(path(root, token))
    for sub in ("uploads", "logs", "runs", "jobs"):
        private_dir(d / sub)
    write_meta(d, {"created_s": time.time()})
    return token


def read_meta(d: Path) -> dict:
    try:
        return json.loads((Path(d) / "meta.json").read_text())
    except (OSError, ValueError):
        return {}


def write_meta(d: Path, meta: Mapping) -> None:
    tmp = Path(d) / f".meta-{secrets.token_hex(4)}.json"
    write_private(tmp, json.dumps(dict(meta), default=str).encode())
    os.replace(tmp, Path(d) / "meta.json")


def update_meta(d: Path, **changes) -> dict:
    meta = read_meta(d)
    meta.update(changes)
    write_meta(d, meta)
    return meta


def touch(d: Path) -> None:
    """Mark the workspace as used now (its idle time restarts)."""
    try:
        os.utime(Path(d) / "meta.json")
    except OSError:
        pass


def last_used_s(d: Path) -> float:
    try:
        return (Path(d) / "meta.json").stat().st_mtime
    except OSError:
        return Path(d).stat().st_mtime


def expire(root: Path, max_idle_days: float | None = None, now_s: float | None = None) -> list[str]:
    """Remove workspaces idle for more than max_idle_days; returns the removed tokens."""
    root = Path(root)
    if not root.is_dir():
        return []
    limit_s = (idle_days() if max_idle_days is None else max_idle_days) * 86400.0
    now_s = time.time() if now_s is None else now_s
    gone = []
    for d in root.iterdir():
        try:
            if d.is_dir() and now_s - last_used_s(d) > limit_s:
                shutil.rmtree(d, ignore_errors=True)
                gone.append(d.name)
        except OSError:
            pass
    return gone


def usage_bytes(d: Path) -> int:
    total = 0
    for p in Path(d).rglob("*"):
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:
            pass
    return total


def check_quota(d: Path, incoming_bytes: int = 0, what: str = "this") -> None:
    """InputError (one line) when the workspace plus incoming_bytes would pass its quota."""
    used, quota = usage_bytes(d), quota_bytes()
    if used + int(incoming_bytes) > quota:
        raise InputError(f"workspace quota reached: {what} needs {incoming_bytes / 2**20:,.1f} MiB, "
                         f"{used / 2**20:,.1f} of {quota / 2**20:,.0f} MiB are used (logs, runs and staged "
                         "uploads); remove a log or the staged uploads on the Logs page, or start a new "
                         "workspace", field="workspace")


def quota_left_bytes(d: Path, freed_bytes: int = 0) -> int:
    """Bytes the workspace may still store (freed_bytes: what the job will delete, e.g. its upload)."""
    return quota_bytes() - usage_bytes(d) + int(freed_bytes)


# ---------------------------------------------------------------------------
# staged uploads: files received but not (yet) loaded


def staged_files(d: Path) -> list[tuple[Path, int, float]]:
    """(path, bytes, age in s) of the files in uploads/, oldest first."""
    up = Path(d) / "uploads"
    if not up.is_dir():
        return []
    now = time.time()
    out = []
    for p in up.iterdir():
        try:
            st = p.stat()
        except OSError:
            continue
        if p.is_file():
            out.append((p, st.st_size, now - st.st_mtime))
    return sorted(out, key=lambda x: -x[2])


def staged_max_age_s() -> float:
    """Staged files older than this are left over (a refresh, a closed tab): twice a job's time budget."""
    return max(1800.0, 2.0 * float(os.environ.get("PLANNER_APP_TIME_S", "900")))


def drop_staged_files(d: Path, older_than_s: float | None = None) -> int:
    """Remove staged uploads (all, or those older than older_than_s); returns the bytes freed."""
    freed = 0
    for p, size, age in staged_files(d):
        if older_than_s is None or age > older_than_s:
            p.unlink(missing_ok=True)
            freed += size
    return freed


# ---------------------------------------------------------------------------
# logs: one DuckDB file each


def log_file(d: Path, name: str) -> Path:
    if not LOG_FILE_RE.match(str(name)) or str(name).startswith("."):
        raise InputError(f"not a log name of this workspace: {str(name)[:40]!r}", field="log")
    return Path(d) / "logs" / f"{name}.duckdb"


def log_files(d: Path) -> dict[str, Path]:
    """{log name: DuckDB file} of the logs loaded in the workspace (complete loads only)."""
    ld = Path(d) / "logs"
    if not ld.is_dir():
        return {}
    return {p.name[: -len(".duckdb")]: p for p in sorted(ld.glob("*.duckdb")) if not p.name.startswith(".")}


def remove_log(d: Path, name: str) -> bool:
    p = log_file(d, name)
    if not p.exists():
        return False
    p.unlink()
    Path(str(p) + ".wal").unlink(missing_ok=True)
    return True


# ---------------------------------------------------------------------------
# Planner runs


def result_id(params: Mapping[str, str]) -> str:
    """A run's id: a hash of its scenario's URL parameters (the same scenario, the same id)."""
    text = json.dumps({k: str(v) for k, v in sorted(params.items())}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_dir(d: Path, rid: str) -> Path:
    if not RESULT_RE.match(str(rid)):
        raise InputError(f"not a result id: {str(rid)[:40]!r}", field="result")
    return Path(d) / "runs" / rid


def has_run(d: Path, rid: str) -> bool:
    return bool(RESULT_RE.match(str(rid))) and (Path(d) / "runs" / rid / "run.json").is_file()


def save_run(d: Path, rid: str, scenario: Mapping, runs: Mapping, wall_s: float) -> Path:
    """Write a Planner run ({label: SimResult-like}) under runs/<rid>/ (complete or not at all)."""
    final = run_dir(d, rid)
    tmp = private_dir(Path(d) / "runs" / f".{rid}-{secrets.token_hex(4)}")
    try:
        labels = []
        for i, (label, r) in enumerate(runs.items()):
            sub = private_dir(tmp / f"run{i}")
            for t in TABLES:
                df = getattr(r, t, None)
                if df is not None:
                    df.to_parquet(sub / f"{t}.parquet", index=False)
                    os.chmod(sub / f"{t}.parquet", FILE_MODE)
            write_private(sub / "summary.json", json.dumps(r.summary, default=_jsonable).encode())
            labels.append(label)
        write_private(tmp / "run.json", json.dumps({"scenario": dict(scenario), "labels": labels,
                                                    "wall_s": float(wall_s), "saved_s": time.time()},
                                                   default=str).encode())
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def save_limits(d: Path, rid: str, limits: Mapping) -> None:
    """Add each run's limits ({label: {"cost_free": ...}}, computed after the run was saved) to
    its stored summary (each summary.json replaced whole, so a reader sees it before or after)."""
    rd = run_dir(d, rid)
    info = json.loads((rd / "run.json").read_text())
    for i, label in enumerate(info["labels"]):
        extra = limits.get(label)
        if not extra:
            continue
        sub = rd / f"run{i}"
        summary = {**json.loads((sub / "summary.json").read_text()), **extra}
        tmp = write_private(sub / f".summary-{secrets.token_hex(4)}.json",
                            json.dumps(summary, default=_jsonable).encode())
        os.replace(tmp, sub / "summary.json")


def _jsonable(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


class StoredRun:
    """A run read back from the workspace: the SimResult attributes the pages use."""

    def __init__(self, summary: dict, **tables: pd.DataFrame):
        self.summary = summary
        for t in TABLES:
            setattr(self, t, tables.get(t, pd.DataFrame()))


def load_run(d: Path, rid: str) -> dict:
    """{"scenario", "runs": {label: StoredRun}, "wall_s", "rid"} of a stored run."""
    rd = run_dir(d, rid)
    info = json.loads((rd / "run.json").read_text())
    runs = {}
    for i, label in enumerate(info["labels"]):
        sub = rd / f"run{i}"
        tables = {t: pd.read_parquet(sub / f"{t}.parquet") for t in TABLES if (sub / f"{t}.parquet").exists()}
        runs[label] = StoredRun(json.loads((sub / "summary.json").read_text()), **tables)
    return {"scenario": info["scenario"], "runs": runs, "wall_s": float(info.get("wall_s", 0.0)), "rid": rid}
