"""The log catalog: which log a command means when it names none (the shipped Summit log), and
the one way every command and replay opens a log (open_log / log_connection).

This policy sits above the readers (planner.logs) and the store (planner.store.db): both are
imported here, neither imports this module.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from pathlib import Path

import duckdb

from planner import paths
from planner.errors import InputError
from planner.logs import _options_key, content_sha256, ingest, set_unit
from planner.store.db import _named_must_exist, connect, log_names, log_row

DEFAULT_LOG = "summit-2021"
# The other shipped job logs, loaded under these names when first asked for (by name, or by the app):
# name -> (file, format, ingest options, unit). Philly is a GPU trace: its jobs count GPUs, its
# machine size is the most GPUs in use at once (the trace does not give the cluster's size).
PHILLY_MAPPING = {"start": "timestamp", "duration": "duration", "nodes": "num_gpus"}
SHIPPED = {"theta-2022": ("ANL-Theta-2022.swf.gz", "swf", {}, "node"),
           "kth-sp2-1996": ("KTH-SP2-1996-2.1-cln.swf.gz", "swf", {}, "node"),
           "philly-2017": ("philly_jobs.csv.gz", "csv", {"mapping": PHILLY_MAPPING}, "GPU")}


def shipped_path(name: str):
    return paths.DATASETS / SHIPPED[name][0]


def ensure_shipped(con, names=None) -> list[str]:
    """Load the shipped job logs (SHIPPED) that the database lacks; their names."""
    out = []
    for name in (SHIPPED if names is None else names):
        if con.execute("SELECT 1 FROM logs WHERE name = ?", [name]).fetchone() is None:
            _, fmt, opts, unit = SHIPPED[name]
            rep = ingest(con, shipped_path(name), format=fmt, name=name, **opts)
            name = rep.get("log", name)
            if unit != "node":
                set_unit(con, name, unit)
        out.append(name)
    return out


def _is_default(log) -> bool:
    return log is None or str(log) == DEFAULT_LOG


def resolve_log(con, log=None):
    """The name (or log_id) to look `log` up by. None or 'summit-2021' mean the shipped Summit
    log, under whatever name it was loaded; when absent it is loaded now (`con` must then be
    writable). Any other name is returned as given (a missing one is refused by its reader)."""
    if not _is_default(log):
        if str(log) in SHIPPED:
            return ensure_shipped(con, [str(log)])[0]
        return log
    return ensure_default(con)


def require_log(con, log=None) -> dict:
    """The logs row of `log` (None or 'summit-2021': the shipped Summit log, see resolve_log); an
    InputError naming the loaded logs when there is none."""
    row = log_row(con, resolve_log(con, log))
    if row is None:
        raise InputError(f"no log named {log!r} in the database (loaded: {', '.join(log_names(con)) or 'none'})",
                         field="log")
    return row


@contextmanager
def log_connection(path=None, log=None, con=None):
    """with log_connection(db, log, con) as (con, name): the given connection with `log`
    resolved on it, or open_log(db, log) opened here and closed on leaving."""
    if con is not None:
        yield con, resolve_log(con, log)
        return
    con, name = open_log(path, log)
    try:
        yield con, name
    finally:
        con.close()


def open_log(path=None, log=None) -> tuple[duckdb.DuckDBPyConnection, object]:
    """(connection, resolved log name) for every command and replay that reads one log.

    The database is opened read-only when it already holds what is asked (so that parallel
    readers, e.g. sweep workers, share one file), read-write otherwise: to create the default
    database, or to load the shipped Summit log the first time. A database named explicitly must
    exist (a typo must not create an empty one). The caller closes the connection."""
    p = paths.default_db() if path is None else path
    _named_must_exist(path)
    if str(p) != ":memory:" and Path(p).exists():
        con = None
        try:
            con = connect(p, read_only=True)
            name = find_default(con) if _is_default(log) else log
            if str(log) in SHIPPED and con.execute("SELECT 1 FROM logs WHERE name = ?", [str(log)]).fetchone() is None:
                name = None  # a shipped log not loaded yet: opened writable below to load it
        except (InputError, duckdb.Error):  # locked, or not (yet) a planner database
            name = None
        if name is not None:
            return con, name
        if con is not None:
            con.close()
    con = connect(p)
    try:
        return con, resolve_log(con, log)
    except BaseException:
        con.close()
        raise


def find_default(con) -> str | None:
    """The name the shipped Summit log is loaded under: 'summit-2021', or the name it got when its
    file was ingested (found by content); None when it is not loaded. Reads only."""
    if con.execute("SELECT 1 FROM logs WHERE name = ?", [DEFAULT_LOG]).fetchone() is not None:
        return DEFAULT_LOG
    row = con.execute("SELECT name FROM logs WHERE sha256 = ?", [_default_key()]).fetchone()
    return None if row is None else row[0]


@functools.lru_cache(maxsize=1)
def _default_key() -> str:
    """The dedup key of the shipped Summit log loaded with default options: its content hash is
    one decompression pass (~60 ms), and the packaged file never changes, so it is taken once."""
    sha, _ = content_sha256(paths.SUMMIT_LOG)
    return _options_key(sha, {"format": "nodestate", "machine_nodes": None, "mapping": None, "tz": None})


def ensure_default(con) -> str:
    """The shipped Summit log's name (find_default), loading it first as 'summit-2021' if the DB
    lacks it."""
    name = find_default(con)
    if name is None:
        ingest(con, paths.SUMMIT_LOG, format="nodestate", name=DEFAULT_LOG)
        name = DEFAULT_LOG
    return name
