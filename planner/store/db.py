"""The DuckDB store: one file, one schema for every log kind.

`connect(path=None, read_only=False)` opens (and creates) the database; the default path is
`planner.paths.default_db()`. All times are seconds since the Unix epoch (DOUBLE, UTC; naive
timestamps in logs are read as UTC). A log is loaded in one transaction (see planner.logs.ingest).

Tables
------
logs          one row per loaded log
    log_id INTEGER PK, name VARCHAR UNIQUE (default: file name without .gz),
    kind VARCHAR ('node' = node-state events | 'jobs' = job records),
    format VARCHAR ('nodestate' | 'swf' | 'slurm' | 'csv'), source VARCHAR (path as given),
    sha256 VARCHAR UNIQUE (of the decompressed content and the load options: the same content
           with the same options loads once, a gzip of a loaded file included),
    machine_nodes INTEGER, machine_nodes_from VARCHAR ('header' | 'flag' | 'node set' |
    'max concurrent'), start_s DOUBLE, end_s DOUBLE, rows BIGINT (records kept),
    skipped BIGINT (records dropped, e.g. run <= 0, job steps), node_identity VARCHAR
    ('exact' = nodes named in the log | 'derived' = stack rule on counts),
    oversub_intervals BIGINT, oversub_s DOUBLE, oversub_max_nodes INTEGER (job logs: times when
    busy nodes exceeded the machine; clipped), loaded_at TIMESTAMP, report VARCHAR (the load
    report as JSON). Added column unit VARCHAR: what one "node" of the log is ('node', NULL
    alike, or 'GPU' for a GPU trace whose jobs count GPUs: its node-hours are GPU-hours;
    planner.logs.UNITS, set_unit)
nodes         (log_id, node_idx INTEGER, name VARCHAR): exact-identity logs only. node_idx follows
    the order of the opening snapshot rows of a node log (BFTrainer's subset order: pool size K =
    nodes 0..K-1), first appearance in the node lists for job logs. Added column
    partition_name VARCHAR: a job log's node's home partition (the partition of the jobs that
    held it longest; NULL for node logs and never-used nodes).
node_events   (log_id, t_s, node_idx, idle BOOLEAN): exact-identity logs only. One row per node
    at the log start (the snapshot), then one row per real state change (repeats dropped).
jobs          (log_id, job_id VARCHAR, submit_s, start_s, end_s, nodes INTEGER, node_list VARCHAR):
    job logs; submit_s may be NULL; node_list NULL when the log has none. Added columns
    partition_name, queue_name VARCHAR: SWF fields 16 / 15, sacct Partition, a job CSV's
    partition column (NULL when the log has none; see planner.idle.views); user_name, group_name
    VARCHAR: SWF fields 12 / 13, sacct User / Account (the per-user and per-group views).
idle_series   (log_id, t_s, idle_nodes INTEGER): N(t) as a step function, every log. idle_nodes
    holds from t_s until the next row's t_s (the last row until logs.end_s). Job logs without
    node lists: machine_nodes - min(busy, machine_nodes).
fragments     (log_id, node_idx, start_s, end_s, n_nodes INTEGER, derived BOOLEAN): idle
    periods of every node over the whole log, stored for exact-identity logs (n_nodes = 1,
    derived = false). Count-level logs store none: their stack-rule fragments depend on the pool
    size and are computed on demand by planner.idle.fragments (as bands of n_nodes nodes
    node_idx..node_idx+n_nodes-1 sharing one period).
node_states   (log_id, t_s, node_idx, state VARCHAR): node-state logs with a state column only
    (planner.idle.states: allocated, idle, down, planned_down, reserved, drained). One row per
    node at the log start, then one per change of state (node_events keeps only the changes of
    idle-or-not). The idle split (planner.idle.split) reads it.
meta          (key, value): schema_version.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np

from planner import paths
from planner.errors import InputError

SCHEMA_VERSION = 1

SCHEMA = """
CREATE SEQUENCE IF NOT EXISTS log_id_seq START 1;
CREATE TABLE IF NOT EXISTS logs (
    log_id INTEGER PRIMARY KEY,
    name VARCHAR UNIQUE NOT NULL,
    kind VARCHAR NOT NULL,
    format VARCHAR NOT NULL,
    source VARCHAR,
    sha256 VARCHAR UNIQUE NOT NULL,
    machine_nodes INTEGER NOT NULL,
    machine_nodes_from VARCHAR,
    start_s DOUBLE NOT NULL,
    end_s DOUBLE NOT NULL,
    rows BIGINT NOT NULL,
    skipped BIGINT NOT NULL,
    node_identity VARCHAR NOT NULL,
    oversub_intervals BIGINT DEFAULT 0,
    oversub_s DOUBLE DEFAULT 0,
    oversub_max_nodes INTEGER DEFAULT 0,
    loaded_at TIMESTAMP DEFAULT current_timestamp,
    report VARCHAR
);
CREATE TABLE IF NOT EXISTS nodes (
    log_id INTEGER NOT NULL,
    node_idx INTEGER NOT NULL,
    name VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS node_events (
    log_id INTEGER NOT NULL,
    t_s DOUBLE NOT NULL,
    node_idx INTEGER NOT NULL,
    idle BOOLEAN NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    log_id INTEGER NOT NULL,
    job_id VARCHAR,
    submit_s DOUBLE,
    start_s DOUBLE NOT NULL,
    end_s DOUBLE NOT NULL,
    nodes INTEGER NOT NULL,
    node_list VARCHAR
);
CREATE TABLE IF NOT EXISTS idle_series (
    log_id INTEGER NOT NULL,
    t_s DOUBLE NOT NULL,
    idle_nodes INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS fragments (
    log_id INTEGER NOT NULL,
    node_idx INTEGER NOT NULL,
    start_s DOUBLE NOT NULL,
    end_s DOUBLE NOT NULL,
    n_nodes INTEGER NOT NULL,
    derived BOOLEAN NOT NULL
);
CREATE TABLE IF NOT EXISTS node_states (
    log_id INTEGER NOT NULL,
    t_s DOUBLE NOT NULL,
    node_idx INTEGER NOT NULL,
    state VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS partition_name VARCHAR;
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS queue_name VARCHAR;
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS user_name VARCHAR;
ALTER TABLE logs ADD COLUMN IF NOT EXISTS unit VARCHAR;
ALTER TABLE jobs ADD COLUMN IF NOT EXISTS group_name VARCHAR;
ALTER TABLE nodes ADD COLUMN IF NOT EXISTS partition_name VARCHAR;
"""

TABLES = ("logs", "nodes", "node_events", "jobs", "idle_series", "fragments", "node_states")
# the live advisor's tables (planner.live.store creates them on first use); removing a log clears them too
LIVE_TABLES = ("live_polls", "live_node_states", "live_job_events", "live_recommendations")


def connect(path=None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the planner database (creating file, folder and schema unless read_only).

    path=":memory:" gives a throwaway in-memory database.
    """
    if path is None:
        path = paths.default_db()
    if str(path) != ":memory:":
        path = Path(path)
        if not read_only:
            path.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as e:  # locked by another process, or not a database file
        text = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise InputError(f"cannot open the database ({text[:300]})", file=str(path)) from None
    if not read_only:
        con.execute(SCHEMA)
        con.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
    return con


def connect_for_reading(path=None, write: bool = False) -> duckdb.DuckDBPyConnection:
    """Read-only when the file exists (other processes may read it at the same time). For
    commands that only read, or change what is already there (write=True: opened writable): a
    database named explicitly must exist (a typo must not create an empty one: InputError 'no
    such database'); the default database is created when missing."""
    p = paths.default_db() if path is None else path
    _named_must_exist(path)
    if str(p) != ":memory:" and Path(p).exists():
        return connect(p, read_only=not write)
    return connect(p)


def _named_must_exist(path) -> None:
    """A database named explicitly must exist: a typo must not create an empty one."""
    if path is not None and str(path) != ":memory:" and not Path(path).exists():
        raise InputError("no such database (give an existing file, or load a log into it with "
                         "planner ingest --db)", file=str(path))


def table_counts(con, log_id: int | None = None) -> dict[str, int]:
    """Row count per schema table (for one log if log_id is given)."""
    out = {}
    for t in TABLES:  # identifiers from the fixed tuple above, never from user text
        if log_id is None:
            out[t] = con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        else:
            out[t] = con.execute(f"SELECT count(*) FROM {t} WHERE log_id = ?", [log_id]).fetchone()[0]
    return out


def log_row(con, log) -> dict | None:
    """The logs row for a name or log_id, as a dict (None if absent)."""
    if isinstance(log, int) and not isinstance(log, bool):
        cur = con.execute("SELECT * FROM logs WHERE log_id = ?", [int(log)])
    else:
        cur = con.execute("SELECT * FROM logs WHERE name = ?", [str(log)])
    row = cur.fetchone()
    if row is None:
        return None
    return dict(zip([d[0] for d in cur.description], row))



def log_names(con) -> list[str]:
    """Names of the loaded logs, in load order."""
    return [r[0] for r in con.execute("SELECT name FROM logs ORDER BY log_id").fetchall()]


# ---------------------------------------------------------------- window queries (planner.idle.fragments)

def idle_nodes_at(con, log_id: int, t_s: float, below: int) -> np.ndarray:
    """Node indexes (< below) idle at time t_s (their last event at or before t_s), ascending."""
    return con.execute(
        "SELECT node_idx FROM (SELECT node_idx, arg_max(idle, t_s) AS idle FROM node_events "
        "WHERE log_id = ? AND t_s <= ? AND node_idx < ? GROUP BY node_idx) WHERE idle "
        "ORDER BY node_idx", [log_id, t_s, below]).fetchnumpy()["node_idx"].astype(np.int64)


def node_events_between(con, log_id: int, t0: float, t1: float, below: int):
    """Node events strictly inside (t0, t1) of nodes < below, by time then node: arrays
    (t_s float, node_idx int64, idle bool)."""
    ev = con.execute(
        "SELECT t_s, node_idx, idle FROM node_events WHERE log_id = ? AND t_s > ? AND t_s < ? "
        "AND node_idx < ? ORDER BY t_s, node_idx", [log_id, t0, t1, below]).fetchnumpy()
    return (np.asarray(ev["t_s"], dtype=float), np.asarray(ev["node_idx"], dtype=np.int64),
            np.asarray(ev["idle"], dtype=bool))


def idle_count_at(con, log_id: int, t_s: float) -> int:
    """N(t_s): the idle count in force at t_s (0 before the first row)."""
    n = con.execute("SELECT arg_max(idle_nodes, t_s) FROM idle_series WHERE log_id = ? AND t_s <= ?",
                    [log_id, t_s]).fetchone()[0]
    return int(n or 0)


def idle_counts_between(con, log_id: int, t0: float, t1: float):
    """The idle_series rows strictly inside (t0, t1): arrays (t_s float, idle_nodes int64)."""
    se = con.execute("SELECT t_s, idle_nodes FROM idle_series WHERE log_id = ? AND t_s > ? AND t_s < ? "
                     "ORDER BY t_s", [log_id, t0, t1]).fetchnumpy()
    return np.asarray(se["t_s"], dtype=float), np.asarray(se["idle_nodes"], dtype=np.int64)


def job_submissions_between(con, log_id: int, t0: float, t1: float) -> np.ndarray:
    """Submit times of a job log's jobs submitted in [t0, t1), ascending (jobs without a submit
    time are left out): the arrival process "log" replays them (planner.workload.generators)."""
    r = con.execute("SELECT submit_s FROM jobs WHERE log_id = ? AND submit_s >= ? AND submit_s < ? "
                    "ORDER BY submit_s", [log_id, t0, t1]).fetchnumpy()
    return np.asarray(r["submit_s"], dtype=float)
