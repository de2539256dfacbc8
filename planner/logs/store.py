"""From parsed logs to the DuckDB tables (vectorized; no per-row Python)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.errors import InputError
from planner.logs.common import JobLog

OVERSUB_REFUSE_FRACTION = 0.5  # refuse a count-level log over-subscribed more than this share of its span


def stable_order(node) -> np.ndarray:
    """Stable argsort of small non-negative ints (node ids): radix sort when they fit 16 bits."""
    node = np.asarray(node)
    if len(node) and node.min() >= 0 and node.max() < 65536:
        return np.argsort(node.astype(np.uint16), kind="stable")
    return np.argsort(node, kind="stable")


def changes_only(t, node, idle, t0, n_nodes):
    """Per node: a snapshot row at t0 plus only real state changes after it.

    Input rows must be in time order (file order within one time). Several rows for one node
    at one time: the last wins. Nodes not seen at t0 are busy until their first row. Returns
    (t, node, idle): one row per node at t0 (node order), then the changes in input order.
    """
    t = np.asarray(t, dtype=float)
    node = np.asarray(node, dtype=np.int64)
    idle = np.asarray(idle, dtype=bool)
    order = stable_order(node)  # by node; time (and file) order kept within a node
    tn, nn, inn = t[order], node[order], idle[order]
    last = np.ones(len(tn), dtype=bool)  # last row per (node, t)
    if len(tn) > 1:
        last[:-1] = (nn[1:] != nn[:-1]) | (tn[1:] != tn[:-1])
    state0 = np.zeros(n_nodes, dtype=bool)
    at0 = last & (tn <= t0)
    state0[nn[at0]] = inn[at0]
    sel = np.flatnonzero(last & (tn > t0))
    ns, is_ = nn[sel], inn[sel]
    prev = np.empty(len(sel), dtype=bool)
    if len(sel):
        first = np.ones(len(sel), dtype=bool)
        first[1:] = ns[1:] != ns[:-1]
        prev[1:] = is_[:-1]
        prev[first] = state0[ns[first]]
    keep_orig = np.zeros(len(t), dtype=bool)
    keep_orig[order[sel[is_ != prev]]] = True
    return (np.concatenate([np.full(n_nodes, float(t0)), t[keep_orig]]),
            np.concatenate([np.arange(n_nodes, dtype=np.int64), node[keep_orig]]),
            np.concatenate([state0, idle[keep_orig]]))


def step_series(t, delta, base=0):
    """Group deltas by time and accumulate: (times, value after each time)."""
    t = np.asarray(t, dtype=float)
    delta = np.asarray(delta, dtype=np.int64)
    if len(t) > 1 and not np.all(t[1:] >= t[:-1]):
        o = np.argsort(t, kind="stable")
        t, delta = t[o], delta[o]
    if len(t) == 0:
        return np.empty(0), np.empty(0, dtype=np.int64)
    bounds = np.flatnonzero(np.r_[True, t[1:] != t[:-1]])
    ut = t[bounds]
    sums = np.add.reduceat(delta, bounds)
    val = base + np.cumsum(sums)
    return ut, val


def idle_series_from_events(t, idle):
    """N(t) from change-only node events (snapshot rows first)."""
    t = np.asarray(t, dtype=float)
    t0 = t[0]
    snap = t == t0
    # snapshot rows are states; later rows are changes (+1 idle, -1 busy)
    delta = np.where(np.asarray(idle, bool), 1, -1).astype(np.int64)
    delta[snap] = np.asarray(idle, bool)[snap].astype(np.int64)
    ut, val = step_series(t, delta)
    keep = np.r_[True, val[1:] != val[:-1]]
    return ut[keep], val[keep]


def node_fragments(t, node, idle, end_s):
    """Idle periods per node from change-only events in time order: (node, start, end),
    clipped at end_s."""
    o = stable_order(node)  # rows are in time order: stays so per node
    t, node, idle = np.asarray(t)[o], np.asarray(node)[o], np.asarray(idle)[o]
    nxt_same = np.r_[node[1:] == node[:-1], False]
    nxt_t = np.r_[t[1:], end_s]
    end = np.where(nxt_same, nxt_t, end_s)
    m = idle & (end > t)
    return node[m], t[m], np.minimum(end[m], end_s)


def node_busy_steps(job: JobLog):
    """Busy count per node over time from an exact-identity job log's node lists.

    Returns (t, node, busy, names): rows sorted by (node, t), one per (node, time) where some
    job starts or ends, busy = jobs holding the node from t on; node codes index names."""
    lens = np.fromiter((len(h) for h in job.node_list), dtype=np.int64, count=len(job.node_list))
    flat = [h for hosts in job.node_list for h in hosts]
    if not flat:
        return np.empty(0), np.empty(0, np.int64), np.empty(0, np.int64), []
    codes, names = pd.factorize(pd.Series(flat, dtype=object))
    st = np.repeat(job.start_s, lens)
    en = np.repeat(job.end_s, lens)
    t = np.concatenate([st, en])
    node = np.concatenate([codes, codes]).astype(np.int64)
    d = np.concatenate([np.ones(len(st), np.int64), -np.ones(len(en), np.int64)])
    # sort by (node, t), sum per (node, t), cumsum (each node's sums total 0)
    o = np.lexsort((t, node))
    t, node, d = t[o], node[o], d[o]
    b = np.flatnonzero(np.r_[True, (t[1:] != t[:-1]) | (node[1:] != node[:-1])])
    return t[b], node[b], np.cumsum(np.add.reduceat(d, b)), [str(n) for n in names]


def exact_from_jobs(steps, t0: float, machine_nodes: int | None):
    """Node events of an exact-identity job log (from node_busy_steps; t0 its first start):
    a node is idle while no job holds it."""
    tt, nn, busy, names = steps
    if machine_nodes is not None and machine_nodes < len(names):
        raise InputError(f"--machine-nodes {machine_nodes} is smaller than the {len(names)} nodes "
                         "named in the log's node lists", field="machine-nodes")
    n_nodes = machine_nodes if machine_nodes is not None else len(names)
    names = names + [f"unnamed-{i}" for i in range(len(names), n_nodes)]
    # state rows: every node idle at t0 unless its rows at t0 say busy
    ev_t = np.concatenate([np.full(n_nodes, t0), tt])
    ev_n = np.concatenate([np.arange(n_nodes), nn])
    ev_i = np.concatenate([np.ones(n_nodes, bool), busy == 0])
    o = np.lexsort((np.r_[np.zeros(n_nodes), np.ones(len(tt))], ev_t))
    return changes_only(ev_t[o], ev_n[o], ev_i[o], t0, n_nodes), names


def count_series(job: JobLog, machine_nodes: int | None):
    """Busy and idle counts of a count-level job log, clipped to the machine (None: the most
    nodes busy at once), with the over-subscription report. Returns (t, idle, report, machine)."""
    t = np.concatenate([job.start_s, job.end_s])
    d = np.concatenate([job.nodes, -job.nodes]).astype(np.int64)
    ut, busy = step_series(t, d)
    if machine_nodes is None:
        machine_nodes = int(busy.max())
    over = busy > machine_nodes
    dt = np.diff(np.r_[ut, ut[-1]])
    span = float(ut[-1] - ut[0])
    runs = int(np.sum(over & ~np.r_[False, over[:-1]]))
    rep = {"oversub_intervals": runs, "oversub_s": float(dt[over].sum()),
           "oversub_max_nodes": int((busy - machine_nodes)[over].max()) if over.any() else 0,
           "oversub_fraction": float(dt[over].sum() / span) if span > 0 else 0.0}
    idle = machine_nodes - np.minimum(busy, machine_nodes)
    keep = np.r_[True, idle[1:] != idle[:-1]]
    return ut[keep], idle[keep], rep, machine_nodes


def node_overlaps(steps) -> tuple[int, float, float, str | None]:
    """Nodes held by two or more jobs at once (from node_busy_steps of an exact-identity job
    log): how many, the node-seconds of such overlap, the node-seconds any job holds a node
    (the union), and the name of the first node found shared (shared nodes count as busy while
    any job holds them)."""
    tt, nn, busy, names = steps
    if not names:
        return 0, 0.0, 0.0, None
    nxt_same = np.r_[nn[1:] == nn[:-1], False]
    dt = np.where(nxt_same, np.r_[tt[1:], 0.0] - tt, 0.0)
    over = busy > 1
    first = names[nn[over][0]] if over.any() else None
    return int(np.unique(nn[over]).size), float(dt[over].sum()), float(dt[busy > 0].sum()), first

