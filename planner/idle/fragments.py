"""Idle capacity of a log window: N(t), events, fragments, T_fwd suggestion, and the pool trace.

Every figure is for a window [start, start + hours) of a log (default: the whole log) and a
pool size K (default: the whole machine, M nodes):

- Exact-identity logs (node-state logs; job logs with node lists): the pool is a subset of K
  nodes, by default the first K in the log's node order (the opening snapshot's row order,
  BFTrainer's subset), or a seeded random subset (`subset="random"`). Pool ids 0..K-1 follow
  the original node order of the subset.
- Count-level logs (job logs without node lists): N_K(t) = floor(N(t) * K / M + 0.5) (the
  machine's idle count scaled to the pool, rounded half up), node identity by the stack rule of
  `planner.replay.pool.from_counts` (node k idle exactly while N_K(t) > k); fragments are labeled derived.

Definitions (all restricted to the window and the pool):
- event: a time strictly inside the window at which the pool's idle set changes; a join event
  has at least one node becoming idle, a leave event at least one node stopping being idle (an
  event can be both). inc_per_h / dec_per_h = join / leave events per hour of window.
- idle_node_hours = integral of N(t) over the window; eq_nodes = idle_node_hours / span_h (the
  time-averaged idle count); idle_ratio = idle_node_hours / (pool nodes * span_h).
- fragment: one node's idle period, clipped to the window. Periods cut by the window edges are
  counted as (shorter) fragments, so the node-time of all fragments equals idle_node_hours
  exactly. frac_lt_600s: share of fragments (by count) shorter than 600 s;
  nodetime_share_lt_600s: their share of idle node-time.
- T_fwd suggestion: for every event, the time until the next leave event after it (how long an
  allocation decided at that event survives before some node is preempted); events with no
  later leave event in the window are censored (left out). The suggestion is the median;
  `tfwd_distribution` gives the whole distribution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.errors import InputError
from planner.idle import outages
from planner.idle.outages import calendar
from planner.idle.states import ALLOCATED, IDLE, PLANNED_DOWN, STATES, UNAVAILABLE
from planner.idle.window import Window
from planner.logs.store import node_fragments, step_series
from planner.replay.pool import PoolTrace, from_counts
from planner.store import catalog, db
from planner.times import describe, parse_time

SHORT_S = 600.0


# ---------------------------------------------------------------- window and log lookup

_log_row = catalog.require_log  # the logs row of a log, or an InputError naming the loaded ones


def bounds(row: dict, win: Window, default_start_s: float | None = None) -> tuple[float, float]:
    """[t0, t1) of the log (its logs row) for a window; the end is clipped to the log end. With no
    start, default_start_s when given (window_data: after a job log's warm-up), else the log's start."""
    lo, hi = float(row["start_s"]), float(row["end_s"])
    start = win.start
    if start is None:
        t0 = lo if default_start_s is None else float(default_start_s)
    else:
        t0 = parse_time(start, field="start")
    if t0 < lo or t0 >= hi:
        how = f" ({start!r} read as epoch seconds)" if isinstance(start, str) and _is_number(start) else ""
        raise InputError(f"window start {describe(t0)}{how} is outside the log ({describe(lo)} .. "
                         f"{describe(hi)})", field="start")
    t1 = hi if win.hours is None else min(t0 + float(win.hours) * 3600.0, hi)
    return t0, t1


def _is_number(x) -> bool:
    try:
        float(x)
    except (TypeError, ValueError):
        return False
    return not isinstance(x, bool)


def _pool_size(row, pool_size) -> int:
    """K for the log (its logs row): the whole machine by default, else 1..M (Window checked the type)."""
    m = int(row["machine_nodes"])
    if pool_size is None:
        return m
    k = int(pool_size)
    if k < 1 or k > m:
        raise InputError(f"pool size must be 1..{m} (the log's machine nodes), got {pool_size!r}",
                         field="pool-size")
    return k


# ---------------------------------------------------------------- the window's raw arrays

@dataclass
class WindowData:
    log: str
    log_id: int
    t0: float
    t1: float
    nodes: int  # pool size K
    machine_nodes: int
    derived: bool
    # exact: initial idle pool ids, then change rows (t, pool id, idle) sorted by t, id
    init_idle: np.ndarray | None = None
    ev_t: np.ndarray | None = None
    ev_node: np.ndarray | None = None
    ev_idle: np.ndarray | None = None
    # both: N(t) step series starting at t0 (strictly increasing times, values change)
    st: np.ndarray | None = None
    sn: np.ndarray | None = None


def _check(win) -> Window:
    if not isinstance(win, Window):
        raise TypeError(f"expected a planner.idle.window.Window (log, start, hours, pool_size, subset, seed), "
                        f"got {type(win).__name__}")
    return win


def _subset_map(m: int, k: int, subset: str, seed: int):
    if subset == "first":
        return None
    chosen = np.sort(np.random.default_rng(seed).choice(m, size=k, replace=False))
    remap = np.full(m, -1, dtype=np.int64)
    remap[chosen] = np.arange(k)
    return remap


def window_data(con, win: Window, *, include_outages: bool = False, include_warmup: bool = False,
                harvest: bool = True) -> WindowData:
    """The window's pool: harvestable capacity by default (planner.idle.split: the idle count is
    zero in a job log's outages and warm-up unless include_outages / include_warmup; harvest=False:
    every idle node as the log has it)."""
    row = _log_row(con, _check(win).log)
    # a window of a given length and no start begins where the app's do: after a job log's warm-up
    # (its idle time is not harvestable, so a window inside it would replay an empty pool)
    d0 = (outages.harvest_start_s(con, row["name"])
          if win.start is None and win.hours is not None and harvest and not include_warmup else None)
    t0, t1 = bounds(row, win, d0)
    k = _pool_size(row, win.pool_size)
    m = int(row["machine_nodes"])
    lid = int(row["log_id"])
    wd = WindowData(log=row["name"], log_id=lid, t0=t0, t1=t1, nodes=k, machine_nodes=m,
                    derived=row["node_identity"] != "exact")
    if not wd.derived:
        remap = _subset_map(m, k, win.subset, win.seed)
        lim = k if remap is None else m
        init = db.idle_nodes_at(con, lid, t0, lim)
        et, en, ei = db.node_events_between(con, lid, t0, t1, lim)
        if remap is not None:
            init = remap[init]
            init = np.sort(init[init >= 0])
            en = remap[en]
            keep = en >= 0
            et, en, ei = et[keep], en[keep], ei[keep]
            o = np.lexsort((en, et))
            et, en, ei = et[o], en[o], ei[o]
        if harvest:
            for a, b in _excluded(con, row, t0, t1, include_outages, include_warmup):
                init, et, en, ei = _mask_exact(t0, t1, init, et, en, ei, a, b)
        wd.init_idle, wd.ev_t, wd.ev_node, wd.ev_idle = init, et, en, ei
        # N(t): initial count, then +-1 per change row, grouped by time
        ut, val = step_series(et, np.where(ei, 1, -1), base=len(init))
        st, sn = np.r_[t0, ut], np.r_[len(init), val]
    else:
        n0 = db.idle_count_at(con, lid, t0)
        se_t, se_n = db.idle_counts_between(con, lid, t0, t1)
        st = np.r_[t0, se_t]
        sn = np.r_[n0, se_n]
        if k != m:
            sn = np.floor(sn * k / m + 0.5).astype(np.int64)
        sn = np.minimum(sn, k)
        if harvest:
            for a, b in _excluded(con, row, t0, t1, include_outages, include_warmup):
                st, sn = _mask_counts(st, sn, t0, t1, a, b)
    keep = np.r_[True, sn[1:] != sn[:-1]] if wd.derived else np.ones(len(st), bool)
    wd.st, wd.sn = st[keep], np.asarray(sn, dtype=np.int64)[keep]
    return wd


def _excluded(con, row, t0, t1, include_outages, include_warmup):
    """The not-harvestable intervals (planner.idle.split) that meet the window."""
    if include_outages and include_warmup:
        return []

    iv = outages.exclusions(con, row["name"], include_outages, include_warmup)
    return [(a, b) for a, b in iv if b > t0 and a < t1]


def _mask_counts(st, sn, t0, t1, a, b):
    """The step series with value 0 over [a, b) (clipped to the window)."""
    a, b = max(a, t0), min(b, t1)
    st, sn = np.asarray(st, float), np.asarray(sn, np.int64)
    at_b = sn[max(np.searchsorted(st, b, side="right") - 1, 0)]
    keep = (st < a) | (st > b)
    t_new, n_new = [st[keep]], [sn[keep]]
    t_new.append(np.array([a])), n_new.append(np.array([0]))
    if b < t1:
        t_new.append(np.array([b])), n_new.append(np.array([at_b]))
    t = np.concatenate(t_new)
    n = np.concatenate(n_new)
    o = np.argsort(t, kind="stable")
    return t[o], n[o]


def _idle_set(t0, init, et, en, ei, upto, inclusive):
    """Pool ids idle just after the events at or before `upto` (inclusive) or strictly before it."""
    sel = (et <= upto) if inclusive else (et < upto)
    t = np.r_[np.full(len(init), t0), et[sel]]
    node = np.r_[init, en[sel]]
    idle = np.r_[np.ones(len(init), bool), ei[sel]]
    if len(node) == 0:
        return np.empty(0, np.int64)
    o = np.lexsort((t, node))  # by node, then time: the last row per node is its state
    node, idle = node[o], idle[o]
    last = np.r_[node[1:] != node[:-1], True]
    return np.sort(node[last & idle]).astype(np.int64)


def _mask_exact(t0, t1, init, et, en, ei, a, b):
    """Exact pool events with no node idle over [a, b): the idle ones leave at a, and the ones
    idle at b join then; events inside [a, b] are replaced by these."""
    a, b = max(a, t0), min(b, t1)
    before = _idle_set(t0, init, et, en, ei, a, inclusive=False)
    after = _idle_set(t0, init, et, en, ei, b, inclusive=True) if b < t1 else np.empty(0, np.int64)
    keep = (et < a) | (et > b)
    nt, nn, ni = [et[keep]], [en[keep]], [ei[keep]]
    if a <= t0:
        init = np.empty(0, np.int64)
    else:
        nt.append(np.full(len(before), a)), nn.append(before), ni.append(np.zeros(len(before), bool))
    if b < t1:
        nt.append(np.full(len(after), b)), nn.append(after), ni.append(np.ones(len(after), bool))
    et, en, ei = np.concatenate(nt), np.concatenate(nn).astype(np.int64), np.concatenate(ni)
    o = np.lexsort((en, et))
    return init, et[o], en[o], ei[o]


def _integral(st, sn, t1, a, b) -> float:
    """Integral of the step series (st, sn; last value until t1) over [a, b)."""
    t = np.r_[np.asarray(st, float), float(t1)]
    n = np.asarray(sn, float)
    lo = np.clip(t[:-1], a, b)
    hi = np.clip(t[1:], a, b)
    return float(np.sum((hi - lo) * n))


def _state_seconds(con, lid: int, t0: float, t1: float, k: int) -> dict:
    rows = con.execute(
        "WITH s AS (SELECT state, t_s, lead(t_s, 1, ?) OVER (PARTITION BY node_idx ORDER BY t_s) AS e "
        "FROM node_states WHERE log_id = ? AND node_idx < ? AND t_s < ?) "
        "SELECT state, sum(greatest(0, least(e, ?) - greatest(t_s, ?))) FROM s GROUP BY state",
        [t1, lid, k, t1, t1, t0]).fetchall()
    out = {s: 0.0 for s in STATES}
    for s, v in rows:
        out[s] = out.get(s, 0.0) + float(v or 0.0)
    return out


def idle_split(con, win: Window, include_outages: bool = False, include_warmup: bool = False,
               outage_min_h: float = 2.0) -> dict:
    """The idle split of a window and pool (module docstring): node-hours per category, the
    outages and the warm-up inside the window, and what is harvestable."""
    # the split counts the first K nodes (node_idx < K, as _state_seconds), whatever the subset
    wd = window_data(con, _check(win).replace(subset="first", seed=0), harvest=False)
    row = _log_row(con, win.log)
    cal = calendar(con, win.log, outage_min_h)
    t0, t1, k = wd.t0, wd.t1, wd.nodes
    span = t1 - t0
    total = k * span
    idle_s = _integral(wd.st, wd.sn, t1, t0, t1)
    per = {s: 0.0 for s in STATES}
    outage_s = warm_s = 0.0
    outs = [o for o in cal.outages if o.end_s > t0 and o.start_s < t1]
    wu = cal.warmup
    if cal.has_states:
        per = _state_seconds(con, int(row["log_id"]), t0, t1, k)
        per[IDLE] = idle_s  # the same integral as every view (node_events), rounding aside
    else:
        for o in outs:
            outage_s += _integral(wd.st, wd.sn, t1, max(o.start_s, t0), min(o.end_s, t1))
        if wu is not None and wu.detected and wu.end_s > t0:
            a, b = max(wu.start_s, t0), min(wu.end_s, t1)
            warm_s = _integral(wd.st, wd.sn, t1, a, b) if b > a else 0.0
            for o in outs:  # the part of the warm-up already counted as an outage
                lo, hi = max(a, o.start_s), min(b, o.end_s)
                if hi > lo:
                    warm_s -= _integral(wd.st, wd.sn, t1, lo, hi)
        per[PLANNED_DOWN] = outage_s
        per[IDLE] = idle_s - outage_s - warm_s
    unavailable = sum(per[s] for s in UNAVAILABLE)
    per[ALLOCATED] = max(total - per[IDLE] - warm_s - unavailable, 0.0)
    excluded = (0.0 if include_outages else outage_s) + (0.0 if include_warmup else warm_s)
    harvest = idle_s - excluded if not cal.has_states else per[IDLE]
    h = 1.0 / 3600.0
    notes = []
    if not cal.has_states and cal.kind == "jobs":
        notes.append("the log records busy or idle only: allocated includes any down, drained or reserved "
                     "nodes; machine-wide periods with no job running for "
                     f"{outage_min_h:g} h or more are counted as planned down / maintenance (outages)")
    elif not cal.has_states:
        notes.append("the node log records idle or not only: allocated includes any down, drained or reserved "
                     "nodes, and its idle nodes are taken as reported (no outage detection)")
    return {
        "log": wd.log, "start_s": t0, "end_s": t1, "span_h": span * h, "nodes": int(k),
        "source": "states" if cal.has_states else ("detected" if cal.kind == "jobs" else "idle or not"),
        # a partition of the total: the six states plus the warm-up's idle node-hours (idle only
        # because the log starts empty); "idle" is the idle time outside outages and warm-up
        "node_hours": {**{s: per[s] * h for s in STATES}, "warmup": warm_s * h},
        "total_node_hours": total * h,
        "idle_node_hours": idle_s * h,  # every idle node-hour of the window, outages and warm-up included
        "outage_node_hours": outage_s * h,
        "warmup_node_hours": warm_s * h,
        "harvestable_node_hours": harvest * h,
        "harvestable_share_of_idle": harvest / idle_s if idle_s > 0 else None,
        "include_outages": bool(include_outages), "include_warmup": bool(include_warmup),
        "outage_min_hours": float(outage_min_h),
        "outages": [o.to_dict() for o in outs],
        # partition-wide outages (job logs naming partitions): listed, and excluded from their
        # partition's harvestable capacity in planner.idle.job_views.by_partition; the machine's
        # own split above does not subtract them (a count-level log does not say how many nodes
        # a partition has)
        "partition_outages": [o.to_dict() for o in cal.partition_outages if o.end_s > t0 and o.start_s < t1],
        "outage_hours": float(sum(min(o.end_s, t1) - max(o.start_s, t0) for o in outs) * h),
        "log_no_job_running_hours": cal.no_job_running_h,
        "log_longest_gaps_h": list(cal.gaps_h[:5]),
        "warmup": None if wu is None else wu.to_dict(),
        "notes": notes,
    }



# ---------------------------------------------------------------- pool trace for the simulator

def pool_trace(con, win: Window, *, include_outages: bool = False, include_warmup: bool = False,
               harvest: bool = True) -> PoolTrace:
    """The pool a replay consumes: idle pool ids at the window start and per event the ids that
    join and leave. See the module docstring for subsets and count-level logs (which have no
    node identity: subset and seed do not apply there, the stack rule fixes the ids). Harvestable
    capacity by default (window_data)."""
    wd = window_data(con, win,
                     include_outages=include_outages, include_warmup=include_warmup, harvest=harvest)
    return trace_from_window(wd)


def trace_from_window(wd: WindowData) -> PoolTrace:
    if wd.derived:
        return from_counts(wd.log, wd.st, wd.sn, end_s=wd.t1, nodes=wd.nodes)
    et, en, ei = wd.ev_t, wd.ev_node, wd.ev_idle
    if len(et) == 0:
        return PoolTrace(log=wd.log, start_s=wd.t0, end_s=wd.t1, nodes=wd.nodes, initial_idle=wd.init_idle)
    ut = np.unique(et)
    joins = np.split(en[ei], np.searchsorted(et[ei], ut[1:], side="left"))
    leaves = np.split(en[~ei], np.searchsorted(et[~ei], ut[1:], side="left"))
    return PoolTrace(log=wd.log, start_s=wd.t0, end_s=wd.t1, nodes=wd.nodes, initial_idle=wd.init_idle,
                     times=ut, joins=joins, leaves=leaves, derived=False)


# ---------------------------------------------------------------- characterization

def stack_bands(st, sn, t1):
    """Fragments of the stack rule as bands: (low id, start, end, width); band b covers
    ids low..low+width-1, all idle exactly over [start, end)."""
    lows, starts, ends, widths = [], [], [], []
    # the stack of (low, high, start) segments (levels low..high-1, increasing), as three lists:
    # no tuple per step (0.43 s instead of 0.61 s for 2 million steps)
    s_lo, s_hi, s_t = [], [], []
    prev = 0
    for t, n in zip(np.asarray(st, float).tolist(), np.asarray(sn).tolist()):
        if n > prev:
            s_lo.append(prev), s_hi.append(n), s_t.append(t)
        elif n < prev:
            while s_hi and s_hi[-1] > n:
                lo, hi, s = s_lo.pop(), s_hi.pop(), s_t.pop()
                if lo < n:  # cut: levels n..hi-1 end, lo..n-1 stay (and nothing below them ends)
                    if t > s:
                        lows.append(n), starts.append(s), ends.append(t), widths.append(hi - n)
                    s_lo.append(lo), s_hi.append(n), s_t.append(s)
                    break
                if t > s:
                    lows.append(lo), starts.append(s), ends.append(t), widths.append(hi - lo)
        prev = n
    for lo, hi, s in zip(s_lo, s_hi, s_t):
        if t1 > s:
            lows.append(lo), starts.append(s), ends.append(t1), widths.append(hi - lo)
    return (np.asarray(lows, np.int64), np.asarray(starts, float), np.asarray(ends, float),
            np.asarray(widths, np.int64))


@dataclass
class Characterization:
    """All figures of one window and pool (arrays; DataFrame views below)."""
    wd: WindowData
    frag_node: np.ndarray
    frag_start: np.ndarray
    frag_end: np.ndarray
    frag_width: np.ndarray
    event_t: np.ndarray
    event_join: np.ndarray  # bool per event
    event_leave: np.ndarray

    @property
    def span_s(self) -> float:
        return self.wd.t1 - self.wd.t0

    def idle_node_s(self) -> float:
        dt = np.diff(np.r_[self.wd.st, self.wd.t1])
        return float(np.sum(dt * self.wd.sn))

    def tfwd_s(self) -> tuple[np.ndarray, np.ndarray]:
        """(event time, time to the next leave event) for events with a later leave event."""
        lt = self.event_t[self.event_leave]
        i = np.searchsorted(lt, self.event_t, side="right")
        ok = i < len(lt)
        return self.event_t[ok], lt[i[ok]] - self.event_t[ok]

    def summary(self) -> dict:
        span_h = self.span_s / 3600.0
        inh = self.idle_node_s() / 3600.0
        k = self.wd.nodes
        ln = self.frag_end - self.frag_start
        w = self.frag_width.astype(float)
        cnt = float(w.sum())
        nt = float((ln * w).sum())
        short = ln < SHORT_S
        _, tf = self.tfwd_s()
        return {
            "events": int(len(self.event_t)),
            "join_events": int(self.event_join.sum()),
            "leave_events": int(self.event_leave.sum()),
            "span_h": span_h,
            "nodes": int(k),
            "idle_node_hours": inh,
            "eq_nodes": inh / span_h if span_h > 0 else 0.0,
            "idle_ratio": inh / (k * span_h) if span_h > 0 and k else 0.0,
            "inc_per_h": float(self.event_join.sum()) / span_h if span_h > 0 else 0.0,
            "dec_per_h": float(self.event_leave.sum()) / span_h if span_h > 0 else 0.0,
            "fragments": {
                "count": int(cnt),
                "median_s": _weighted_median(ln, w) if cnt else None,
                "mean_s": nt / cnt if cnt else None,
                "frac_lt_600s": float(w[short].sum() / cnt) if cnt else None,
                "nodetime_share_lt_600s": float((ln * w)[short].sum() / nt) if nt > 0 else None,
                "derived": bool(self.wd.derived),
            },
            "tfwd_suggestion_s": float(np.median(tf)) if len(tf) else None,
        }


def _weighted_median(x, w) -> float:
    if len(w) and np.all(w == 1):
        return float(np.median(x))
    o = np.argsort(x)
    x, w = x[o], w[o]
    c = np.cumsum(w)
    total = c[-1]
    # as np.median of the array with x[i] repeated w[i] times (1-based positions)
    if total % 2 == 1:
        return float(x[np.searchsorted(c, (total + 1) / 2.0, side="left")])
    return float((x[np.searchsorted(c, total / 2.0, side="left")] +
                  x[np.searchsorted(c, total / 2.0 + 1, side="left")]) / 2.0)


def characterize(con, win: Window, *, include_outages: bool = False, include_warmup: bool = False,
                 harvest: bool = True) -> Characterization:
    wd = window_data(con, win,
                     include_outages=include_outages, include_warmup=include_warmup, harvest=harvest)
    return characterize_window(wd)


def characterize_window(wd: WindowData) -> Characterization:
    if wd.derived:
        lo, s, e, w = stack_bands(wd.st, wd.sn, wd.t1)
        d = np.diff(wd.sn)
        ev_t = wd.st[1:]
        join, leave = d > 0, d < 0
    else:
        n_init = len(wd.init_idle)
        t = np.r_[np.full(n_init, wd.t0), wd.ev_t]
        node = np.r_[wd.init_idle, wd.ev_node]
        idle = np.r_[np.ones(n_init, bool), wd.ev_idle]
        lo, s, e = node_fragments(t, node, idle, wd.t1)
        w = np.ones(len(lo), np.int64)
        ev_t = np.unique(wd.ev_t)
        join = np.isin(ev_t, wd.ev_t[wd.ev_idle], assume_unique=False)
        leave = np.isin(ev_t, wd.ev_t[~wd.ev_idle], assume_unique=False)
    return Characterization(wd=wd, frag_node=lo, frag_start=s, frag_end=e, frag_width=w,
                            event_t=ev_t, event_join=join, event_leave=leave)


def summary(con, win: Window, *, include_outages: bool = False, include_warmup: bool = False,
            harvest: bool = True) -> dict:
    """The figures of `planner fragments --json` (keys as in issue 2), on harvestable capacity by
    default (idle_node_hours and every figure count no outage or warm-up; planner.idle.split),
    with the idle split of the window under "split" and its headline figures at the top."""
    out = characterize(con, win,
                       include_outages=include_outages, include_warmup=include_warmup, harvest=harvest).summary()
    return _with_split(out, idle_split(con, win, include_outages=include_outages,
                                            include_warmup=include_warmup), harvest)


def _with_split(out: dict, sp: dict, harvest: bool) -> dict:
    out.update(harvestable_only=bool(harvest), harvestable_node_hours=sp["harvestable_node_hours"],
               outage_node_hours=sp["outage_node_hours"], outage_hours=sp["outage_hours"],
               warmup=sp["warmup"], split=sp)
    return out


# ---------------------------------------------------------------- DataFrames for the pages

def event_window_h(span_h: float) -> float:
    """The bins of an events chart over span_h hours: 12 h, a week beyond two months."""
    return 12.0 if span_h <= 60 * 24 else 7 * 24.0


def views(con, win: Window, max_points: int | None = 600, window_h: float | None = None,
          *, include_outages: bool = False, include_warmup: bool = False, harvest: bool = True) -> dict:
    """Everything the Idle page draws, from ONE characterization of the window (each of summary,
    fragment_lengths, events_per_window and tfwd_distribution characterizes it again: 0.7-0.8 s
    each on a 1-million-job log): {"summary", "idle_series" (binned to max_points),
    "fragment_lengths", "events_per_window" (window_h, default event_window_h), "tfwd_distribution",
    "window_h"}."""
    c = characterize(con, win, include_outages=include_outages, include_warmup=include_warmup, harvest=harvest)
    s = _with_split(c.summary(), idle_split(con, win, include_outages=include_outages, include_warmup=include_warmup),
                    harvest)
    wh = float(window_h) if window_h else event_window_h(s["span_h"])
    return {"summary": s, "idle_series": _idle_series_df(c.wd, max_points), "fragment_lengths": _fragment_df(c),
            "events_per_window": _events_df(c, wh), "tfwd_distribution": _tfwd_df(c), "window_h": wh}


def _times(t_s):
    return pd.to_datetime(np.asarray(t_s, dtype=float), unit="s", utc=True)


def idle_series(con, win: Window, max_points: int | None = None,
                *, include_outages: bool = False, include_warmup: bool = False, harvest: bool = True) -> pd.DataFrame:
    """N(t) over the window: columns t_s, time, idle_nodes (a step function: the value holds
    until the next row; a last row at the window end closes it). With max_points, the series is
    binned into at most that many equal bins with time-weighted mean, min and max."""
    wd = window_data(con, win,
                     include_outages=include_outages, include_warmup=include_warmup, harvest=harvest)
    return _idle_series_df(wd, max_points)


def _idle_series_df(wd: WindowData, max_points=None) -> pd.DataFrame:
    keep = np.r_[True, wd.sn[1:] != wd.sn[:-1]]  # exact logs: N may stay while the set changes
    t = np.r_[wd.st[keep], wd.t1]
    n = np.r_[wd.sn[keep], wd.sn[-1]]
    if max_points is None or len(t) <= max_points:
        return pd.DataFrame({"t_s": t, "time": _times(t), "idle_nodes": n})
    edges = np.linspace(wd.t0, wd.t1, int(max_points) + 1)
    # exact time-weighted mean per bin from the cumulative integral
    cum = np.r_[0.0, np.cumsum(np.diff(t) * n[:-1])]

    def integral(x):
        i = np.clip(np.searchsorted(t, x, side="right") - 1, 0, len(t) - 1)
        return cum[i] + (x - t[i]) * n[i]

    area = np.diff(integral(edges))
    mean = area / np.diff(edges)
    idx = np.clip(np.searchsorted(edges, t[:-1], side="right") - 1, 0, len(edges) - 2)
    mn = pd.Series(n[:-1]).groupby(idx).min().reindex(range(len(edges) - 1))
    mx = pd.Series(n[:-1]).groupby(idx).max().reindex(range(len(edges) - 1))
    # bins with no change inside take the value in force at their start
    at = n[np.clip(np.searchsorted(t, edges[:-1], side="right") - 1, 0, len(t) - 1)]
    mn = np.minimum(mn.fillna(np.inf).to_numpy(), at)
    mx = np.maximum(mx.fillna(-np.inf).to_numpy(), at)
    return pd.DataFrame({"t_s": edges[:-1], "time": _times(edges[:-1]), "idle_nodes": mean,
                         "min_nodes": mn, "max_nodes": mx})


def series_stats(series: pd.DataFrame, end_s: float) -> dict | None:
    """{"mean", "min", "max"} idle nodes of an idle_series ending at epoch second end_s: the mean
    weighted by how long each value holds; min and max from the bins' own min_nodes/max_nodes when
    the series was binned (a bin's mean hides its extremes). None for an empty series."""
    if not len(series):
        return None
    t = series["t_s"].to_numpy(dtype=float)
    n = series["idle_nodes"].to_numpy(dtype=float)
    dt = np.diff(np.r_[t, max(float(end_s), t[-1])])
    lo = series["min_nodes"].to_numpy(dtype=float) if "min_nodes" in series else n
    hi = series["max_nodes"].to_numpy(dtype=float) if "max_nodes" in series else n
    mean = float(np.dot(n, dt) / dt.sum()) if dt.sum() > 0 else float(n[0])
    return {"mean": mean, "min": float(lo.min()), "max": float(hi.max())}


def fragment_lengths(con, win: Window) -> pd.DataFrame:
    """One row per fragment length (band for derived logs): length_s, n_nodes (fragments with
    that row), node_s; sorted by length with cdf_count and cdf_nodetime (for CDF plots)."""
    return _fragment_df(characterize(con, win))


def _fragment_df(c: Characterization) -> pd.DataFrame:
    ln = c.frag_end - c.frag_start
    o = np.argsort(ln, kind="stable")
    ln, w = ln[o], c.frag_width[o]
    ns = ln * w
    df = pd.DataFrame({"node_idx": c.frag_node[o], "start_s": c.frag_start[o], "length_s": ln,
                       "n_nodes": w, "node_s": ns, "derived": c.wd.derived})
    df["cdf_count"] = np.cumsum(w) / max(w.sum(), 1)
    df["cdf_nodetime"] = np.cumsum(ns) / (ns.sum() if ns.sum() > 0 else 1.0)
    return df


def events_per_window(con, win: Window, window_h: float = 12.0) -> pd.DataFrame:
    """Events, join events and leave events per consecutive window of window_h hours."""
    return _events_df(characterize(con, win), window_h)


def _events_df(c: Characterization, window_h=12.0) -> pd.DataFrame:
    if not window_h or window_h <= 0:
        raise InputError(f"window_h must be positive, got {window_h!r}", field="window_h")
    w = window_h * 3600.0
    nb = max(1, int(np.ceil(c.span_s / w)))
    b = np.minimum(((c.event_t - c.wd.t0) // w).astype(np.int64), nb - 1)
    ev = np.bincount(b, minlength=nb)
    jn = np.bincount(b, weights=c.event_join, minlength=nb).astype(np.int64)
    lv = np.bincount(b, weights=c.event_leave, minlength=nb).astype(np.int64)
    t = c.wd.t0 + np.arange(nb) * w
    return pd.DataFrame({"t_s": t, "time": _times(t), "hours": np.minimum(w, c.wd.t1 - t) / 3600.0,
                         "events": ev, "join_events": jn, "leave_events": lv})


def tfwd_distribution(con, win: Window) -> pd.DataFrame:
    """Per event: the time until the next leave event (the T_fwd method); columns t_s, time, tfwd_s."""
    return _tfwd_df(characterize(con, win))


def _tfwd_df(c: Characterization) -> pd.DataFrame:
    t, d = c.tfwd_s()
    return pd.DataFrame({"t_s": t, "time": _times(t), "tfwd_s": d})
