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

from planner.errors import InputError
from planner.idle.outages import calendar
from planner.idle.views import Span, q_steps, span
from planner.idle.window import Window

LABELS = {"partition": "partition_name", "queue": "queue_name", "user": "user_name", "group": "group_name"}
NO_WAIT = "(no job waiting)"
NO_PARTITION = "(no partition)"
UNKNOWN = "(unknown)"

_WAITING_JOBS = """
    SELECT submit_s, start_s, nodes, coalesce(nullif({label}, ''), '{unknown}') AS lab FROM jobs
    WHERE log_id = $log_id AND submit_s IS NOT NULL AND start_s > submit_s
      AND start_s > $t0 AND submit_s < $t1"""


def q_waiting_jobs(con, sp: Span, label: str | None = None) -> pd.DataFrame:
    """Jobs that wait (submit < start) at some time of the window: submit_s, start_s, nodes, lab."""
    if label not in (None, *LABELS.values()):  # a fixed identifier, never user text
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
    label_nodes: np.ndarray | None  # (segments, labels); None when not asked for (dense=False)
    labels: list
    tot_nodes: np.ndarray | None = None  # per segment: nodes requested by all waiting jobs
    seg_k: np.ndarray | None = None  # per segment: index of the last event time at or before it (-1: none)
    ev_k: np.ndarray | None = None  # per job event (submit +, start -): its event time index
    ev_lab: np.ndarray | None = None  # its label code
    ev_nodes: np.ndarray | None = None  # its signed requested nodes


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


def segments(con, sp: Span, label: str | None = None, dense: bool = True) -> Segments:
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
    tot_ut = np.cumsum(np.bincount(idx, weights=d * size, minlength=len(ut)))
    if dense:
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
    lab_w = None
    if dense:
        lab_w = np.where(none[:, None], 0.0, per[k] if len(ut) else np.zeros((len(a), len(labels))))
    tot_w = np.where(none, 0.0, tot_ut[k] if len(ut) else 0.0)
    return Segments(a, b, n, jobs_w, min_w, lab_w, [str(x) for x in labels], tot_w,
                    np.where(none, -1, k), idx, lab, d * size)


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


def idle_while_waiting(con, win: Window) -> dict | None:
    """Idle node-hours while no job waited vs while jobs waited (split: no waiting job fit / one
    did), and the hours with a job waiting. None for logs without submit times (node logs, job
    logs whose records lack them)."""
    sp = span(con, win)
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


def _seconds_inside(a: np.ndarray, b: np.ndarray, ivs) -> np.ndarray:
    """Per segment [a, b), its seconds inside the intervals ivs (disjoint)."""
    ov = np.zeros(len(a))
    for lo, hi in ivs:
        ov += np.clip(np.minimum(b, hi) - np.maximum(a, lo), 0.0, None)
    return ov


def q_by_partition_waiting(con, sp: Span, label: str, outages: dict | None = None) -> pd.DataFrame:
    """Count level: each moment's idle node-time shared among the waiting jobs' partitions by
    requested nodes; moments with no job waiting -> NO_WAIT. outage_node_hours: the part of a
    partition's share that falls in its partition-wide outages (outages: {partition: intervals})."""
    g = segments(con, sp, label, dense=False)
    tot = g.tot_nodes
    wait = tot > 0
    ns = g.n * (g.b - g.a)

    def per_label(weight):
        # sum over segments of weight * (label's waiting nodes) / tot, without the dense
        # (segments x labels) matrix: a job event at time index e counts in every segment whose
        # last event index is >= e, so each event takes the suffix sum of weight / tot from e on
        w = np.where(wait, weight / np.where(wait, tot, 1.0), 0.0)
        if not len(g.ev_k):
            return np.zeros(len(g.labels))
        on = g.seg_k >= 0
        wk = np.bincount(g.seg_k[on], weights=w[on], minlength=int(g.ev_k.max()) + 1)
        suffix = np.cumsum(wk[::-1])[::-1]
        return np.bincount(g.ev_lab, weights=g.ev_nodes * suffix[g.ev_k], minlength=len(g.labels))

    vals = dict(zip(g.labels, per_label(ns) / 3600.0))
    vals[NO_WAIT] = float(ns[~wait].sum()) / 3600.0
    out_nh = {}
    for j, lab in enumerate(g.labels):
        ivs = (outages or {}).get(lab)
        if ivs:
            out_nh[lab] = float(per_label(g.n * _seconds_inside(g.a, g.b, ivs))[j]) / 3600.0
    df = pd.DataFrame({"partition": list(vals), "idle_node_hours": list(vals.values()),
                       "outage_node_hours": [out_nh.get(k, 0.0) for k in vals]})
    return df.sort_values(["idle_node_hours", "partition"], ascending=[False, True], ignore_index=True)


def q_partition_outage_nodes(con, sp: Span, outages: dict) -> dict:
    """Exact identity: per partition, the idle node-hours of its home nodes inside its outages."""
    out = {}
    for part, ivs in outages.items():
        tot = 0.0
        for lo, hi in ivs:
            a, b = max(lo, sp.t0), min(hi, sp.t1)
            if b <= a:
                continue
            tot += con.execute("""
                SELECT coalesce(sum(least(f.end_s, $b) - greatest(f.start_s, $a)), 0) FROM fragments f
                JOIN nodes n ON n.log_id = f.log_id AND n.node_idx = f.node_idx
                WHERE f.log_id = $log_id AND n.partition_name = $part AND f.end_s > $a AND f.start_s < $b""",
                {"log_id": sp.log_id, "a": a, "b": b, "part": part}).fetchone()[0]
        out[part] = float(tot) / 3600.0
    return out


def by_partition(con, win: Window) -> pd.DataFrame | None:
    """Idle node-hours by partition (or queue): columns partition, idle_node_hours, share, basis
    ('node home partition' | 'waiting jobs'), label ('partition' | 'queue'), outage_node_hours
    (the part in the partition's own partition-wide outages, planner.idle.outages) and
    harvestable_node_hours (idle minus those). None when the log has no partitions or queues (or,
    counted per waiting job, no submit times)."""
    sp = span(con, win)
    if sp.kind != "jobs":
        return None
    label = _label_column(con, sp)
    if label is None:
        return None
    outs = calendar(con, sp.log).partition_intervals() if label == "partition_name" else {}
    if sp.node_identity == "exact":
        df, basis = q_by_partition_nodes(con, sp), "node home partition"
        o = q_partition_outage_nodes(con, sp, outs)
        df["outage_node_hours"] = df["partition"].map(lambda p: o.get(p, 0.0)).astype(float)
    elif _has_submit(con, sp):
        df, basis = q_by_partition_waiting(con, sp, label, outs), "waiting jobs"
    else:
        return None
    df["harvestable_node_hours"] = df["idle_node_hours"] - df["outage_node_hours"]
    total = float(df["idle_node_hours"].sum())
    df["share"] = df["idle_node_hours"] / total if total > 0 else 0.0
    df["basis"] = basis
    df["label"] = "partition" if label == "partition_name" else "queue"
    return df


# ---------------------------------------------------------------- by user, group, queue or partition

_WAIT_BY = """
    WITH started AS (
        SELECT coalesce(nullif({label}, ''), '{unknown}') AS name, count(*) AS jobs_started,
               avg(start_s - submit_s) / 3600.0 AS wait_mean_h,
               median(start_s - submit_s) / 3600.0 AS wait_median_h,
               quantile_cont(start_s - submit_s, 0.95) / 3600.0 AS wait_p95_h
        FROM jobs WHERE log_id = $log_id AND start_s >= $t0 AND start_s < $t1 AND submit_s IS NOT NULL
        GROUP BY 1),
    used AS (
        SELECT coalesce(nullif({label}, ''), '{unknown}') AS name,
               sum(nodes * (least(end_s, $t1) - greatest(start_s, $t0))) / 3600.0 AS used_node_hours
        FROM jobs WHERE log_id = $log_id AND end_s > $t0 AND start_s < $t1 GROUP BY 1)
    SELECT coalesce(u.name, s.name) AS name, coalesce(u.used_node_hours, 0) AS used_node_hours,
           coalesce(s.jobs_started, 0) AS jobs_started, s.wait_mean_h, s.wait_median_h, s.wait_p95_h
    FROM used u FULL OUTER JOIN started s ON u.name = s.name"""


def labels_of(con, log) -> list[str]:
    """The breakdowns a job log offers: the keys of LABELS whose column has a value ([] for node logs)."""
    sp = span(con, Window(log))
    if sp.kind != "jobs":
        return []
    have = {r[0] for r in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = 'jobs' AND database_name = current_database()"
    ).fetchall()}
    cols = [k for k, c in LABELS.items() if c in have]
    if not cols:
        return []
    counts = con.execute("SELECT " + ", ".join(f"count({LABELS[k]})" for k in cols)  # fixed identifiers
                         + " FROM jobs WHERE log_id = $log_id", {"log_id": sp.log_id}).fetchone()
    return [k for k, n in zip(cols, counts) if n]


def by_label(con, win: Window, by: str) -> pd.DataFrame | None:
    """Idle and wait per user, group (account), queue or partition, the way XDMoD groups them:
    columns name, idle_node_hours (each moment's idle node-time shared among the waiting jobs'
    labels by requested nodes, as by_partition's count-level basis; NO_WAIT for moments with no
    job waiting; harvestable capacity only), share (of the window's idle node-hours),
    used_node_hours (the label's jobs' node-hours inside the window), jobs_started (in the
    window), wait_mean_h / wait_median_h / wait_p95_h (submit to start of those jobs), sorted by
    idle node-hours. For `partition` on a log with node lists, idle_node_hours is the home
    partition's (by_partition), with outage_node_hours and harvestable_node_hours. None when the
    log does not have the field (or submit times)."""
    if by not in LABELS:
        raise InputError(f"--by must be one of {', '.join(LABELS)}, got {by!r}", field="by")
    sp = span(con, win)
    if by not in labels_of(con, sp.log) or not _has_submit(con, sp):
        return None
    col = LABELS[by]
    if by == "partition" or (by == "queue" and _label_column(con, sp) == "queue_name"):
        idle = by_partition(con, win)
        idle = idle.rename(columns={"partition": "name"})[["name", "idle_node_hours", "outage_node_hours",
                                                             "harvestable_node_hours"]]
    else:
        idle = q_by_partition_waiting(con, sp, col).rename(columns={"partition": "name"})
        idle = idle[["name", "idle_node_hours"]]
    wait = con.execute(_WAIT_BY.format(label=col, unknown=UNKNOWN), sp.params).df()
    df = idle.merge(wait, on="name", how="outer")
    df["idle_node_hours"] = df["idle_node_hours"].fillna(0.0)
    for c in ("used_node_hours", "jobs_started"):
        df[c] = df[c].fillna(0)
    total = float(df["idle_node_hours"].sum())
    df["share"] = df["idle_node_hours"] / total if total > 0 else 0.0
    df["by"] = by
    df = df.sort_values(["idle_node_hours", "used_node_hours", "name"], ascending=[False, False, True],
                        ignore_index=True)
    df["jobs_started"] = df["jobs_started"].astype(int)
    return df
