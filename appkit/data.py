"""Where the pages get their data: the shared database, the workspace's logs, cached queries.

- The shipped logs live in the shared database (planner.paths.default_db(), i.e. $PLANNER_DB).
  The app opens it once per process (st.cache_resource), loads the shipped Summit log into it
  if missing (catalog.ensure_default), then reopens it read-only; every script run
  takes its own cursor (`con.cursor()`), which is DuckDB's way to share a connection across
  threads.
- A user's uploads live in their workspace (appkit.workspace: a private directory named by an
  unguessable token carried in the URL). Each loaded log is its own DuckDB file there, written
  once by a worker process (appkit.worker) and opened read-only here, so a load under way never
  locks the logs already loaded, and any number of sessions (a colleague with the link) can read
  them at once. Nobody without the token can name them.
- Query results of the shared database are cached with st.cache_data (keyed by database path
  and arguments); workspace logs are cached per file (path and modification time).

The functions without Streamlit in their body (save_upload, log_name_for) are what the tests
call directly; the load itself runs in a worker (appkit.jobs.job_ingest).
"""

from __future__ import annotations

import os
import re
import tomllib
import uuid
from collections.abc import Callable
from pathlib import Path

import duckdb
import pandas as pd

from appkit import workspace
from planner import logs, paths
from planner.errors import InputError
from planner.idle.window import Window
from planner.logs import limits
from planner.store import catalog, db

# the workspaces' root: $PLANNER_SESSIONS_DIR, else <data dir>/workspaces (survives restarts)
SESSIONS_ROOT = Path(os.environ.get("PLANNER_SESSIONS_DIR") or (paths.DATA_DIR / "workspaces"))


def streamlit_upload_cap(config: Path = paths.ROOT / ".streamlit" / "config.toml") -> int:
    """Bytes Streamlit's file uploader lets through: server.maxUploadSize from the project's config,
    in MB as its browser side counts them (10^6 bytes on Linux and macOS); 500 MB without it."""
    try:
        return int(tomllib.loads(config.read_text())["server"]["maxUploadSize"]) * 10**6
    except (OSError, KeyError, TypeError, ValueError):
        return 500 * 10**6


# bytes one upload may have, as documented: 500 MiB (the app counts them while saving; Streamlit's
# server.maxUploadSize is set just above, 525 MB, so that exactly 500 MiB gets through to this
# check), or the readers' input limit (planner.logs.limits.MAX_INPUT_BYTES) if that were smaller
APP_UPLOAD_CAP_BYTES = 500 * 2**20
MAX_UPLOAD_BYTES = min(limits.MAX_INPUT_BYTES, APP_UPLOAD_CAP_BYTES)
ALLOWED_SUFFIXES = (".swf", ".csv", ".txt", ".log", ".sacct", ".psv", ".tsv", ".dat")


# ---------------------------------------------------------------------------
# uploads (pure: no Streamlit)


def server_filename(user_filename: str) -> str:
    """A uuid name keeping only a whitelisted extension (and .gz) of the user's file name."""
    name = Path(str(user_filename)).name.lower()
    gz = name.endswith(".gz")
    if gz:
        name = name[:-3]
    suffix = Path(name).suffix
    suffix = suffix if suffix in ALLOWED_SUFFIXES else ""
    return f"{uuid.uuid4().hex}{suffix}{'.gz' if gz else ''}"


def log_name_for(user_filename: str, taken=()) -> str:
    """A readable log name from the user's file name: safe characters, not one already taken."""
    base = Path(str(user_filename)).name
    for ext in (".gz",) + ALLOWED_SUFFIXES:
        if base.lower().endswith(ext):
            base = base[: -len(ext)]
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", base).strip("-._")[:60] or "upload"
    name, i = base, 2
    taken = set(taken)
    while name in taken:
        name, i = f"{base}-{i}", i + 1
    return name


COPY_CHUNK = 1 << 20  # bytes per read while saving an upload (the server never holds a second whole copy)


def save_upload(data, user_filename: str, directory: Path, max_bytes: int | None = None) -> Path:
    """The upload (bytes, or a binary file object such as Streamlit's UploadedFile, read in 1 MiB
    chunks: no `getvalue()` copy of the whole file) under a server-chosen name in a private folder
    (0700), readable by the server only (0600). More than max_bytes (default MAX_UPLOAD_BYTES) is
    refused with one line and nothing is kept."""
    cap = MAX_UPLOAD_BYTES if max_bytes is None else int(max_bytes)
    name = Path(str(user_filename)).name
    size = len(data) if isinstance(data, (bytes, bytearray, memoryview)) else getattr(data, "size", None)
    if size is not None and size > cap:
        raise InputError(f"the file has {size / 2**20:,.1f} MiB; the limit per upload is {cap / 2**20:,.0f} MiB",
                         file=name)
    directory = workspace.private_dir(Path(directory))
    target = directory / server_filename(user_filename)
    if isinstance(data, (bytes, bytearray, memoryview)):
        return workspace.write_private(target, bytes(data))
    if hasattr(data, "seek"):
        data.seek(0)
    written = 0
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, workspace.FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as fh:
            while chunk := data.read(COPY_CHUNK):
                written += len(chunk)
                if written > cap:
                    raise InputError(f"the file has more than {cap / 2**20:,.0f} MiB (the limit per upload)",
                                     file=name)
                fh.write(chunk)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    os.chmod(target, workspace.FILE_MODE)
    return target


# ---------------------------------------------------------------------------
# Streamlit side

import streamlit as st  # noqa: E402


def stage_upload(up, ws_dir: Path) -> Path:
    """The chosen file's staged copy in the workspace (`uploads/`), from which the page works.

    Under a server, appkit.upload_route wrote it while it arrived (the server held at most 1 MiB
    of it at once; the size and quota limits were counted then) and Streamlit's store holds an
    empty record. Without that route (AppTest) the bytes are in memory: the quota is checked and
    they are saved in 1 MiB chunks (save_upload). InputError (one line) when refused."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    from appkit import upload_route

    ws_dir = Path(ws_dir)
    ctx = get_script_run_ctx()
    got = upload_route.take(ctx.session_id, up.file_id) if ctx is not None else None
    if got is None and upload_route.active():
        raise InputError("the upload did not arrive complete (a reload while it was sent?): choose the file again",
                         file=Path(str(up.name)).name)
    if got is None:
        workspace.check_quota(ws_dir, up.size, what=Path(str(up.name)).name)
        return save_upload(up, up.name, ws_dir / "uploads")
    if got.error:
        raise InputError(got.error, file=Path(str(up.name)).name)
    target = workspace.private_dir(ws_dir / "uploads") / got.path.name
    if got.path != target:  # the session moved to another workspace while the file arrived
        os.replace(got.path, target)
        upload_route.own(target, ctx.session_id)
    return target


def upload_bytes(up, ws_dir: Path, max_bytes: int) -> bytes:
    """A small upload's bytes (a Trainer CSV): staged as any upload, read back (at most max_bytes,
    InputError beyond) and the staged copy removed."""
    path = stage_upload(up, ws_dir)
    try:
        if path.stat().st_size > max_bytes:
            raise InputError(f"larger than {max_bytes / 2**20:,.0f} MiB", file=Path(str(up.name)).name)
        return path.read_bytes()
    finally:
        path.unlink(missing_ok=True)


def release_upload(up, key: str | None = None) -> None:
    """Drop the server's in-memory copy of an upload once it is staged on disk (or refused).

    Streamlit keeps every uploaded file's bytes in its in-memory upload store until the session
    shuts down, and a closed tab's session is kept "for reconnect" and, in Streamlit 1.67, never shut
    down once its TTL passes (the store's entry stays for the server's life: issue 23, finding 1).
    The record is replaced by an empty one with the same id and name, so the file uploader still
    shows the file and later reruns see the same `file_id` (no bytes); the page works from the staged
    copy on disk. `key`: the file uploader's widget key (its cached value is emptied too)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    ctx = get_script_run_ctx()
    mgr = getattr(ctx, "uploaded_file_mgr", None)
    if ctx is None or mgr is None or up is None:
        return
    mgr.add_file(ctx.session_id, UploadedFileRec(file_id=up.file_id, name=up.name, type=up.type, data=b""))
    held = [up]
    if key is not None:  # the widget's value cached in the session's widget state holds the bytes too
        val = st.session_state.get(key)  # (the script gets a deep copy of it at every run)
        held += val if isinstance(val, list) else [val]
    for f in held:
        if f is not None and getattr(f, "file_id", None) == up.file_id and not f.closed:
            # emptied, not closed: the buffer is freed all the same, and the widget's value stays a
            # usable object (Streamlit deep-copies it at every later run; a closed one raised
            # "I/O operation on closed file" when a second file was chosen)
            f.seek(0)
            f.truncate(0)


@st.cache_resource(show_spinner="Opening the database and loading the shipped Summit log ...")
def _shared_connection(path: str):
    try:
        con = db.connect(path)
    except (duckdb.IOException, InputError) as e:
        # another process reads the file (a worker of a server from before a restart, the CLI):
        # the shipped logs were loaded by the server that made the file; read it as it is
        if not is_lock_error(e) or not Path(path).exists():
            raise
    else:
        try:
            catalog.ensure_default(con)
            catalog.ensure_shipped(con)  # the shipped job logs (Theta 2022, KTH SP2) next to Summit
        finally:
            con.close()
    workspace.expire(SESSIONS_ROOT)
    # Reopened read-only: the shipped logs are shared and never written by the app, and
    # other processes (workers, the `planner` CLI reading) can open the same file read-only.
    return db.connect(path, read_only=True)


def is_lock_error(e: BaseException) -> bool:
    """DuckDB's error when another process holds a conflicting lock on the file."""
    return "could not set lock" in str(e).lower() or "conflicting lock" in str(e).lower()


def shared_db_busy() -> str | None:
    """None when the shared database is open; else a note (not an exception) naming the process
    that holds it: a run from before a restart finishing, or a `planner` command writing it."""
    try:
        _shared_connection(shared_db_path())
        return None
    except (duckdb.IOException, InputError) as e:
        if not is_lock_error(e):
            raise
        pid = re.search(r"\(PID (\d+)\)", str(e))
        return ("The log database is in use by another process" + (f" (PID {pid.group(1)})" if pid else "")
                + ": a run from before the server restarted is finishing, or a `planner` command is writing "
                "it. This page tries again every few seconds.")


def shared_db_path() -> str:
    return str(paths.default_db())


def shared_cursor():
    """A cursor on the shared database for this script run (thread-safe use of one connection)."""
    return _shared_connection(shared_db_path()).cursor()


def session_dir() -> Path:
    """This session's workspace directory (appkit.session binds the token; made if missing)."""
    token = st.session_state.get("_ws")
    if not workspace.exists(SESSIONS_ROOT, token):
        token = st.session_state["_ws"] = workspace.create(SESSIONS_ROOT)
    return workspace.path(SESSIONS_ROOT, token)


@st.cache_resource(show_spinner=False, max_entries=64)
def _log_connection(path: str, mtime_ns: int):
    return db.connect(path, read_only=True)


def _ws_log_cursor(path: Path):
    return _log_connection(str(path), path.stat().st_mtime_ns).cursor()


def _ws_logs() -> dict[str, Path]:
    return workspace.log_files(session_dir())


def _with_harvest_start(con, df: pd.DataFrame) -> pd.DataFrame:
    """The logs' table with harvest_start_s: where a window starts by default, after a job log's
    warm-up (planner.idle.split), never before the log's start."""
    from planner.idle import split

    hs = []
    for name, s0 in zip(df["name"], df["start_s"]):
        try:
            hs.append(max(float(split.harvest_start_s(con, name)), float(s0)))
        except (InputError, OSError):
            hs.append(float(s0))
    df["harvest_start_s"] = hs
    return df


# each cached with the table (one cache lookup per database, not one per log and page run)
@st.cache_data(show_spinner=False, max_entries=16)
def _shared_logs(db_path: str) -> pd.DataFrame:
    con = _shared_connection(db_path).cursor()
    return _with_harvest_start(con, logs.list_logs(con))


@st.cache_data(show_spinner=False, max_entries=256)
def _ws_log_row(path: str, mtime_ns: int) -> pd.DataFrame:
    con = _log_connection(path, mtime_ns).cursor()
    return _with_harvest_start(con, logs.list_logs(con))


def list_all_logs() -> pd.DataFrame:
    """Shipped logs (origin "shipped") and this workspace's uploads (origin "uploaded").

    A job log's warm-up has one rule, the library's: it stays in the log (start_s is the log's
    start), is left out of harvestable capacity, and windows start after it (harvest_start_s)."""
    shared = _shared_logs(shared_db_path()).copy()
    shared.insert(0, "origin", "shipped")
    frames = [shared]
    for path in _ws_logs().values():
        try:
            df = _ws_log_row(str(path), path.stat().st_mtime_ns).copy()
        except (OSError, InputError):
            continue
        df.insert(0, "origin", "uploaded")
        frames.append(df)
    out = pd.concat(frames, ignore_index=True) if len(frames) > 1 else shared
    # harvest_start_s, after a job log's warm-up: the last column, as the pages read it
    return out[[c for c in out.columns if c != "harvest_start_s"] + ["harvest_start_s"]]


def db_path_for_log(log: str) -> str:
    """The DuckDB file holding `log` (a workspace log's own file, else the shared database)."""
    p = _ws_logs().get(log)
    return str(p) if p is not None else shared_db_path()


def con_for_log(log: str):
    """(cursor, cache key) for the database that holds `log`; cache key None = do not cache."""
    p = _ws_logs().get(log)
    if p is not None:
        return _ws_log_cursor(p), None
    return shared_cursor(), shared_db_path()


def cached_call(fn: Callable, target: str | Window, **kw):
    """fn(con, target, **kw) on the database that holds the log (`target`: a log's name, or a
    planner.idle.window.Window on it), cached per database file: the shared one by path, a
    workspace log by path and modification time (a reloaded log is a new key). One cache for the
    fragments queries, the operator views and the survival model's evaluation, for shipped and
    uploaded logs alike. `fn` is the library function itself (e.g. fragments.views)."""
    log = target.log if isinstance(target, Window) else target
    p = _ws_logs().get(log)
    key = (str(p), p.stat().st_mtime_ns) if p is not None else (shared_db_path(), None)
    return _cached_call(key, f"{fn.__module__}.{fn.__qualname__}", fn, target, tuple(sorted(kw.items())))


@st.cache_data(show_spinner=False, max_entries=256)
def _cached_call(key: tuple, name: str, _fn: Callable, target, kw_items: tuple):
    # `name` keys the cache (Streamlit does not hash arguments starting with "_")
    path, mtime_ns = key
    con = _shared_connection(path) if mtime_ns is None else _log_connection(path, mtime_ns)
    return _fn(con.cursor(), target, **dict(kw_items))


def warmup_detections() -> dict[str, dict]:
    """{log: warmup.Warmup.to_dict()} found when the workspace's logs were loaded."""
    return dict(workspace.read_meta(session_dir()).get("warmup") or {})


# how the list of logs' columns read in the app's tables (Home, Logs): one place
LOG_COLUMN_LABELS = {"nodes": "machine size", "machine_nodes_from": "size from", "rows": "records",
                     "skipped": "records skipped", "start": "start (UTC)", "end": "end (UTC)",
                     "span_h": "span (h)", "node_identity": "node identity"}


def unit_of(row) -> str:
    """A log's unit (planner.logs.UNITS): "GPU" for a GPU trace, else "node" (also for no row)."""
    try:
        return "GPU" if row["unit"] == "GPU" else "node"
    except (KeyError, IndexError, TypeError):
        return "node"


def unit_word(row) -> str:
    """How a log's machine size reads: 'GPUs' for a GPU trace (planner.logs.UNITS), else 'nodes'."""
    return "GPUs" if unit_of(row) == "GPU" else "nodes"


def log_unit(name: str) -> str:
    """The unit of the log called `name` among the logs this session sees ("node" when not found)."""
    logs = list_all_logs()
    hit = logs[logs["name"] == name] if not logs.empty else logs
    return unit_of(hit.iloc[0]) if len(hit) else "node"
