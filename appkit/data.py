"""Where the pages get their data: the shared database, per-session uploads, cached queries.

Isolation rule (the simplest one that is robust):
- The shipped logs live in the shared database (planner.paths.default_db(), i.e. $PLANNER_DB).
  The app opens it once per process (st.cache_resource), loads the shipped Summit log into it
  if missing (planner.logs.ensure_default), then reopens it read-only; every script run
  takes its own cursor (`con.cursor()`), which is DuckDB's way to share a connection across
  threads.
- A session's uploads are stored under server-chosen names (uuid + a whitelisted extension)
  in a per-session directory, and ingested into a per-session DuckDB file in that directory.
  Another session never opens that file, so an upload (and anything computed from it) cannot
  show anywhere else. Directories older than a day are removed when the server starts.
- Query results of the shared database are cached with st.cache_data (keyed by database path
  and arguments); per-session data is not cached across sessions at all. Simulation results
  live only in st.session_state.

The functions without Streamlit in their body (save_upload, ingest_upload, log_name_for)
are what the tests call directly.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import pandas as pd

from planner.errors import InputError

SESSIONS_ROOT = Path(os.environ.get("PLANNER_SESSIONS_DIR",
                                    Path(tempfile.gettempdir()) / "harvest-planner-sessions"))
ALLOWED_SUFFIXES = (".swf", ".csv", ".txt", ".log", ".sacct", ".psv", ".tsv", ".dat")
MAX_SESSION_AGE_S = 24 * 3600


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


def save_upload(data: bytes, user_filename: str, directory: Path) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / server_filename(user_filename)
    path.write_bytes(data)
    return path


def ingest_upload(con, data: bytes, user_filename: str, directory: Path, *, format=None,
                  machine_nodes=None, mapping=None, taken_names=()) -> dict:
    """Store an upload under a server-chosen name and load it with the CLI's readers.

    Raises planner.errors.InputError (one line, naming the user's file) on bad input; the
    stored copy is removed then, and planner.logs.ingest leaves nothing half-loaded.
    """
    from planner import logs

    if not data:
        raise InputError("the file is empty", file=Path(str(user_filename)).name)
    path = save_upload(data, user_filename, directory)
    name = log_name_for(user_filename, taken_names)
    try:
        return logs.ingest(con, path, format=format or None, name=name,
                           machine_nodes=machine_nodes or None, mapping=mapping or None)
    except InputError as e:
        path.unlink(missing_ok=True)
        msg = str(e).replace(str(path), Path(str(user_filename)).name).replace(path.name,
                                                                                Path(str(user_filename)).name)
        raise InputError(msg) from None
    except Exception:
        path.unlink(missing_ok=True)
        raise


def cleanup_old_sessions(root: Path = SESSIONS_ROOT, max_age_s: float = MAX_SESSION_AGE_S) -> int:
    """Remove per-session directories not touched for max_age_s; returns how many."""
    removed = 0
    if not root.is_dir():
        return 0
    now = time.time()
    for d in root.iterdir():
        try:
            if d.is_dir() and now - d.stat().st_mtime > max_age_s:
                shutil.rmtree(d, ignore_errors=True)
                removed += 1
        except OSError:
            pass
    return removed


# ---------------------------------------------------------------------------
# Streamlit side

import streamlit as st  # noqa: E402


@st.cache_resource(show_spinner="Opening the database and loading the shipped Summit log ...")
def _shared_connection(path: str):
    from planner import db, logs

    con = db.connect(path)
    logs.ensure_default(con)
    con.close()
    cleanup_old_sessions()
    # Reopened read-only: the shipped logs are shared and never written by the app, and
    # other processes (sweep workers of the Compare page, the `planner` CLI reading) can
    # open the same file read-only at the same time.
    return db.connect(path, read_only=True)


def shared_db_path() -> str:
    from planner.paths import default_db

    return str(default_db())


def shared_cursor():
    """A cursor on the shared database for this script run (thread-safe use of one connection)."""
    return _shared_connection(shared_db_path()).cursor()


def session_id() -> str:
    sid = st.session_state.get("_sid")
    if sid is None:
        sid = st.session_state["_sid"] = uuid.uuid4().hex
    return sid


def session_dir() -> Path:
    return SESSIONS_ROOT / session_id()


def session_con(create: bool = False):
    """A cursor on this session's upload database (None until the first upload unless create=True).

    A fresh cursor per call: a session can have two script runs alive at once (a rerun starts
    while the stopped one is still inside a DuckDB call), and one DuckDB connection refuses a
    second concurrent call.
    """
    base = st.session_state.get("_session_con")
    if base is None:
        if not create:
            return None
        from planner import db

        d = session_dir()
        d.mkdir(parents=True, exist_ok=True)
        base = st.session_state["_session_con"] = db.connect(d / "uploads.duckdb")
    return base.cursor()


@st.cache_data(show_spinner=False, max_entries=16)
def _shared_logs(db_path: str) -> pd.DataFrame:
    from planner import logs

    return logs.list_logs(_shared_connection(db_path).cursor())


def list_all_logs() -> pd.DataFrame:
    """Shipped logs (origin "shipped") and this session's uploads (origin "uploaded")."""
    from planner import logs

    shared = _shared_logs(shared_db_path()).copy()
    shared.insert(0, "origin", "shipped")
    con = session_con()
    if con is None:
        return shared
    mine = logs.list_logs(con).copy()
    mine.insert(0, "origin", "uploaded")
    return pd.concat([shared, mine], ignore_index=True)


def con_for_log(log: str):
    """(cursor, cache key) for the database that holds `log`; cache key None = do not cache."""
    from planner import db

    con = session_con()
    if con is not None and db.log_row(con, log) is not None:
        return con, None
    return shared_cursor(), shared_db_path()


def upload(data: bytes, user_filename: str, **kw) -> dict:
    """The page's upload handler: into this session's database only."""
    from planner import logs

    shared_names = set(_shared_logs(shared_db_path())["name"])
    con = session_con(create=True)
    mine = set(logs.list_logs(con)["name"])
    return ingest_upload(con, data, user_filename, session_dir(), taken_names=shared_names | mine, **kw)


def log_query(fn_name: str, log: str, **kw):
    """Call planner.fragments.<fn_name>(con, log, **kw), cached for the shared database."""
    con, key = con_for_log(log)
    if key is None:
        from planner import fragments

        return getattr(fragments, fn_name)(con, log, **kw)
    return _cached_log_query(key, fn_name, log, tuple(sorted(kw.items())))


@st.cache_data(show_spinner=False, max_entries=256)
def _cached_log_query(db_path: str, fn_name: str, log: str, kw_items: tuple):
    from planner import fragments

    return getattr(fragments, fn_name)(_shared_connection(db_path).cursor(), log, **dict(kw_items))
