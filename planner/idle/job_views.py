"""Operator views that need a job log's records: idle while jobs waited, and by partition or queue.

Definitions in planner.idle.views's docstring (the one place); both views sum to the window's idle
node-hours. The rows come from DuckDB (bound parameters; the label column is one of two fixed
identifiers); the sweep over waiting jobs (how many wait, the smallest request) is NumPy and
one heap, since a range join of every moment with every waiting job is slow in SQL.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.idle.views import Span, q_steps, span

NO_WAIT = "(no job waiting)"
NO_PARTITION = "(no partition)"
UNKNOWN = "(unknown)"

_WAITING_JOBS = """
    SELECT submit_s, start_s, nodes, coalesce(nullif({label}, ''), '{unknown}') AS lab FROM jobs
    WHERE log_id = $log_id AND submit_s IS NOT NULL AND start_s > submit_s
      AND start_s > $t0 AND submit_s < $t1"""


def q_waiting_jobs(con, sp: Span, label: str | None = None) -> pd.DataFrame:
    """Jobs that wait (submit < start) at some time of the window: submit_s, start_s, nodes, lab."""
    if label not in (None, "partition_name", "queue_name"):  # a fixed identifier, never user text
        raise ValueError(label)
    return con.execute(_WAITING_JOBS.format(label=label or "NULL", unknown=UNKNOWN), sp.params).df()


@dataclass
class Segments:
    """The window cut wherever N(t) or the set of waiting jobs changes: [a, b) with n idle nodes,
    jobs waiting, min_nodes (smallest request among them; 0 when none) and nodes per label."""
    a: np.ndarray
    b: np.ndarray
    n: np.ndarray
    jobs: np.ndarray
    min_nodes: np.ndarray
    label_nodes: np.ndarray  # (segments, labels)
    labels: list


def _min_waiting(ut_idx: np.ndarray, sizes: np.ndarray, d: np.ndarray, n_times: int) -> np.ndarray:
    """Smallest request among the waiting jobs after each event time (0 when none waits): a sweep
    with a lazily cleaned heap (rows sorted by event time index)."""
    out = [0] * n_times
    count: dict[int, int] = {}
    heap: list[int] = []
    # Python lists, not numpy scalars, in the loop (1.6 -> 0.4 s for 2 million rows)
    idx, size, delta = ut_idx.tolist(), sizes.tolist(), d.tolist()
    i, rows = 0, len(idx)
    for k in range(n_times):
        while i < rows and idx[i] == k:
            c = size[i]
            v = count.get(c, 0) + delta[i]
            count[c] = v
            if delta[i] > 0 and v == 1:
                heapq.heappush(heap, c)
            i += 1
        while heap and count.get(heap[0], 0) <= 0:
            heapq.heappop(heap)
        out[k] = heap[0] if heap else 0
    return np.asarray(out, dtype=np.int64)


def segments(con, sp: Span, label: str | None = None) -> Segments:
    jobs = q_waiting_jobs(con, sp, label)
    st, sn = q_steps(con, sp)
    codes, labels = pd.factorize(jobs["lab"])
    t = np.r_[jobs["submit_s"].to_numpy(float), jobs["start_s"].to_numpy(float)]
    d = np.r_[np.ones(len(jobs), np.int64), -np.ones(len(jobs), np.int64)]
    size = np.r_[jobs["nodes"].to_numpy(np.int64), jobs["nodes"].to_numpy(np.int64)]
    lab = np.r_[codes, codes]
    o = np.argsort(t, kind="stable")
    t, d, size, lab = t[o], d[o], size[o], lab[o]
    ut, idx = np.unique(t, return_inverse=True)
    cnt = np.cumsum(np.bincount(idx, weights=d, minlength=len(ut)))
    per = np.zeros((len(ut), len(labels)))
    np.add.at(per, (idx, lab), d * size)
    per = np.cumsum(per, axis=0)
    mins = _min_waiting(idx, size, d, len(ut))
    a = np.unique(np.r_[st, ut[(ut > sp.t0) & (ut < sp.t1)]])
    b = np.r_[a[1:], sp.t1]
    n = sn[np.searchsorted(st, a, side="right") - 1]
    k = np.searchsorted(ut, a, side="right") - 1  # state after the events at or before a (-1: none yet)
    none = k < 0
    k = np.maximum(k, 0)
    jobs_w = np.where(none, 0, cnt[k] if len(ut) else 0).astype(np.int64)
    min_w = np.where(none, 0, mins[k] if len(ut) else 0)
    lab_w = np.where(none[:, None], 0.0, per[k] if len(ut) else np.zeros((len(a), len(labels))))
    return Segments(a, b, n, jobs_w, min_w, lab_w, [str(x) for x in labels])


def _label_column(con, sp: Span) -> str | None:
    """'partition_name' when the log's jobs name partitions, else 'queue_name', else None (also for
    a database written before these columns existed and opened read-only: nothing to break down)."""
    have = {r[0] for r in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = 'jobs' AND database_name = current_database()"
    ).fetchall()}
    if not {"partition_name", "queue_name"} <= have:
        return None
    n_part, n_queue = con.execute(
        "SELECT count(partition_name), count(queue_name) FROM jobs WHERE log_id = $log_id",
        {"log_id": sp.log_id}).fetchone()
    return "partition_name" if n_part else ("queue_name" if n_queue else None)


def _has_submit(con, sp: Span) -> bool:
    return bool(con.execute("SELECT count(submit_s) FROM jobs WHERE log_id = $log_id",
                            {"log_id": sp.log_id}).fetchone()[0])


def q_idle_while_waiting(con, sp: Span) -> dict:
    g = segments(con, sp)
    ns = g.n * (g.b - g.a)
    wait = g.jobs > 0
    fit = wait & (g.min_nodes <= g.n)
    return {"idle_no_wait_node_hours": float(ns[~wait].sum()) / 3600.0,
            "idle_while_waiting_node_hours": float(ns[wait].sum()) / 3600.0,
            "idle_while_waiting_none_fit_node_hours": float(ns[wait & ~fit].sum()) / 3600.0,
            "idle_while_waiting_some_fit_node_hours": float(ns[fit].sum()) / 3600.0,
            "hours_with_jobs_waiting_h": float((g.b - g.a)[wait].sum()) / 3600.0}


def idle_while_waiting(con, log, start=None, hours=None) -> dict | None:
    """Idle node-hours while no job waited vs while jobs waited (split: no waiting job fit / one
    did), and the hours with a job waiting. None for logs without submit times (node logs, job
    logs whose records lack them)."""
    sp = span(con, log, start, hours)
    if sp.kind != "jobs" or not _has_submit(con, sp):
        return None
    return q_idle_while_waiting(con, sp)


def q_by_partition_nodes(con, sp: Span) -> pd.DataFrame:
    """Exact identity: idle time of each node (its fragments, clipped to the window) by home partition."""
    return con.execute(f"""
        SELECT coalesce(n.partition_name, '{NO_PARTITION}') AS partition,
               sum(least(f.end_s, $t1) - greatest(f.start_s, $t0)) / 3600.0 AS idle_node_hours
        FROM fragments f LEFT JOIN nodes n ON n.log_id = f.log_id AND n.node_idx = f.node_idx
        WHERE f.log_id = $log_id AND f.end_s > $t0 AND f.start_s < $t1
        GROUP BY 1 ORDER BY 2 DESC, 1""", sp.params).df()


def q_by_partition_waiting(con, sp: Span, label: str) -> pd.DataFrame:
    """Count level: each moment's idle node-time shared among the waiting jobs' partitions by
    requested nodes; moments with no job waiting -> NO_WAIT."""
    g = segments(con, sp, label)
    ns = g.n * (g.b - g.a)
    tot = g.label_nodes.sum(axis=1)
    wait = tot > 0
    share = g.label_nodes[wait] / tot[wait, None]
    vals = dict(zip(g.labels, (ns[wait, None] * share).sum(axis=0) / 3600.0))
    vals[NO_WAIT] = float(ns[~wait].sum()) / 3600.0
    df = pd.DataFrame({"partition": list(vals), "idle_node_hours": list(vals.values())})
    return df.sort_values(["idle_node_hours", "partition"], ascending=[False, True], ignore_index=True)


def by_partition(con, log, start=None, hours=None) -> pd.DataFrame | None:
    """Idle node-hours by partition (or queue): columns partition, idle_node_hours, share, basis
    ('node home partition' | 'waiting jobs'), label ('partition' | 'queue'). None when the log
    has no partitions or queues (or, counted per waiting job, no submit times)."""
    sp = span(con, log, start, hours)
    if sp.kind != "jobs":
        return None
    label = _label_column(con, sp)
    if label is None:
        return None
    if sp.node_identity == "exact":
        df, basis = q_by_partition_nodes(con, sp), "node home partition"
    elif _has_submit(con, sp):
        df, basis = q_by_partition_waiting(con, sp, label), "waiting jobs"
    else:
        return None
    total = float(df["idle_node_hours"].sum())
    df["share"] = df["idle_node_hours"] / total if total > 0 else 0.0
    df["basis"] = basis
    df["label"] = "partition" if label == "partition_name" else "queue"
    return df
