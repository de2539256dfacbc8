"""The idle split, the way Slurm's `sreport cluster utilization` splits a machine's node-hours:
allocated, down, planned down / maintenance, reserved, drained, and idle; and of the idle
node-hours, which are harvestable.

Every log kind:

- A node-state log with a state column (planner.logs.nodestate; the vocabulary is
  planner.idle.states, re-exported here) gives every state's node-hours directly; only `idle` is
  harvestable (node_events, and so every replay, already count only `idle` as idle).
- A log without states (job logs; a node log with idle 0/1, such as the shipped Summit log)
  knows only busy and idle. In a job log, two kinds of idle time are not capacity to harvest
  (a node log's idle is what the machine reported, taken as it is):
  * outages: machine-wide periods of at least `OUTAGE_MIN_H` hours with no job running at all
    (every node idle). A job log cannot tell a maintenance from an unplanned outage; both are
    labelled here (`reason`: "jobs waiting" when a job submitted before the end of the period
    starts only after it, "nothing submitted" when no job was submitted during it, else "no job
    running") and counted as planned down / maintenance;
  * the warm-up of a job log (planner.idle.warmup): its first hours look idle only because the
    log does not know the jobs that were already running.
  By default both are excluded from harvestable capacity: `exclusions()` gives the intervals,
  planner.idle.fragments.window_data sets the pool's idle count to zero inside them (so every
  view and every replay sees harvestable capacity), and include_outages / include_warmup put them
  back. Partition-wide outages are not detected (a job log without node lists does not say how
  many nodes each partition has).

Definitions for a window [t0, t1) and a pool of the first K nodes (count-level logs: N(t) scaled
to K as in planner.idle.fragments): total = K * span; idle = integral of the pool's idle count;
node_hours partitions the total: allocated + idle + down + planned_down + reserved + drained +
warmup, where (logs without states) planned_down = the outages' idle node-hours, warmup = the
warm-up's idle node-hours outside outages, idle = the rest of the idle node-hours;
harvestable = idle + planned_down if include_outages + warmup if include_warmup.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from planner.idle import warmup as warmup_mod
from planner.idle.states import (  # noqa: F401  (the vocabulary, re-exported for issue 26)
    ALIASES,
    ALLOCATED,
    CODE,
    DOWN,
    DRAINED,
    HARVESTABLE,
    IDLE,
    LABEL,
    PLANNED_DOWN,
    RESERVED,
    STATES,
    UNAVAILABLE,
    state_of,
)

WARMUP = "warmup"  # the split's extra category: a job log's warm-up (not a node state)
LABEL_WARMUP = "warm-up (log artefact)"
OUTAGE_MIN_H = 2.0  # a machine-wide period with no job running counts as an outage from this length
WAIT_SLACK_S = 60.0  # a job submitted this close to the end of a gap did not wait through it


@dataclass(frozen=True)
class Outage:
    start_s: float
    end_s: float
    reason: str  # "jobs waiting" | "nothing submitted" | "no job running"
    waiting_jobs: int = 0

    @property
    def hours(self) -> float:
        return (self.end_s - self.start_s) / 3600.0

    def to_dict(self) -> dict:
        from planner.times import format_iso

        return {"start": format_iso(self.start_s), "end": format_iso(self.end_s), "hours": self.hours,
                **asdict(self)}


def full_idle_gaps(t_s, idle_nodes, end_s: float, machine_nodes: int) -> list[tuple[float, float]]:
    """Maximal periods [s, e) of a step series N(t) (holding until the next time, the last value
    until end_s) in which every node is idle (N >= machine_nodes: no job running)."""
    t = np.r_[np.asarray(t_s, dtype=float), float(end_s)]
    n = np.asarray(idle_nodes)
    if len(n) == 0:
        return []
    full = n >= machine_nodes
    d = np.diff(np.r_[False, full, False].astype(np.int8))
    starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    return [(float(t[a]), float(t[b])) for a, b in zip(starts, ends) if t[b] > t[a]]


def detect_outages(gaps, submit_s=None, start_s=None, min_hours: float = OUTAGE_MIN_H) -> list[Outage]:
    """The gaps of at least min_hours, labelled with a reason from the jobs' submit and start
    times (arrays; None for a node log: reason "no job running")."""
    out = []
    sub = None if submit_s is None else np.asarray(submit_s, dtype=float)
    st = None if start_s is None else np.asarray(start_s, dtype=float)
    for a, b in gaps:
        if b - a < min_hours * 3600.0:
            continue
        reason, waiting = "no job running", 0
        if sub is not None and st is not None:
            ok = np.isfinite(sub)
            waiting = int(np.sum(ok & (sub < b - WAIT_SLACK_S) & (st >= b)))
            submitted = int(np.sum(ok & (sub >= a) & (sub < b)))
            reason = "jobs waiting" if waiting else ("nothing submitted" if not submitted else "no job running")
        out.append(Outage(a, b, reason, waiting))
    return out


@dataclass(frozen=True)
class Calendar:
    """What of a whole log is not harvestable, found once per log: outages and warm-up."""
    log: str
    kind: str
    start_s: float
    end_s: float
    machine_nodes: int
    has_states: bool
    outages: tuple  # of Outage
    no_job_running_h: float  # every full-idle gap, any length
    gaps_h: tuple  # lengths of every full-idle gap (h), longest first
    warmup: warmup_mod.Warmup | None  # job logs only

    def intervals(self, include_outages: bool = False, include_warmup: bool = False) -> list[tuple[float, float]]:
        """The excluded [start, end) intervals, sorted and merged."""
        iv = [] if include_outages else [(o.start_s, o.end_s) for o in self.outages]
        if not include_warmup and self.warmup is not None and self.warmup.detected:
            iv.append((self.warmup.start_s, self.warmup.end_s))
        return _merge(iv)


def _merge(iv):
    out = []
    for a, b in sorted(iv):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def has_states(con, log_id: int) -> bool:
    try:
        return con.execute("SELECT 1 FROM node_states WHERE log_id = ? LIMIT 1", [int(log_id)]).fetchone() is not None
    except Exception:  # a database written before node_states existed (opened read-only)
        return False


def calendar(con, log, outage_min_h: float = OUTAGE_MIN_H) -> Calendar:
    """The log's outages and warm-up (cached per stored log: its content key and the threshold)."""
    from planner.idle.fragments import _log_row

    row = _log_row(con, log)
    return _calendar(con, row["sha256"], float(outage_min_h), row)


def _calendar(con, sha: str, outage_min_h: float, row: dict) -> Calendar:
    key = (sha, row["name"], outage_min_h)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    lid, m = int(row["log_id"]), int(row["machine_nodes"])
    states = has_states(con, lid)
    if states:  # the states say what is down; nothing is guessed
        cal = Calendar(row["name"], row["kind"], float(row["start_s"]), float(row["end_s"]), m, True, (), 0.0, (), None)
    else:
        se = con.execute("SELECT t_s, idle_nodes FROM idle_series WHERE log_id = ? ORDER BY t_s", [lid]).fetchnumpy()
        t, n = np.asarray(se["t_s"], float), np.asarray(se["idle_nodes"], np.int64)
        # job logs only: a node log's "idle" is what the machine reported (a node log without
        # states cannot tell a maintenance from an empty machine, and does not pretend to)
        gaps = full_idle_gaps(t, n, float(row["end_s"]), m) if row["kind"] == "jobs" else []
        sub = st = None
        if row["kind"] == "jobs" and gaps:
            j = con.execute("SELECT submit_s, start_s FROM jobs WHERE log_id = ?", [lid]).fetchnumpy()
            sub = np.asarray(j["submit_s"], dtype=float)  # NULL -> NaN
            st = np.asarray(j["start_s"], dtype=float)
        outs = detect_outages(gaps, sub, st, outage_min_h)
        wu = warmup_mod.detect(np.r_[t, float(row["end_s"])], np.r_[n, n[-1] if len(n) else 0], m) \
            if row["kind"] == "jobs" and len(t) else None
        lens = sorted(((b - a) / 3600.0 for a, b in gaps), reverse=True)
        cal = Calendar(row["name"], row["kind"], float(row["start_s"]), float(row["end_s"]), m, False,
                       tuple(outs), float(sum(lens)), tuple(lens), wu)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[key] = cal
    return cal


_CACHE: dict = {}  # (content key, name, threshold) -> Calendar: a stored log never changes


def harvest_start_s(con, log) -> float:
    """Where a window on this log starts by default: after a job log's warm-up, else its start."""
    cal = calendar(con, log)
    if cal.warmup is not None and cal.warmup.detected and cal.warmup.end_s < cal.end_s:
        return float(cal.warmup.end_s)
    return float(cal.start_s)


def exclusions(con, log, include_outages: bool = False, include_warmup: bool = False,
               outage_min_h: float = OUTAGE_MIN_H) -> list[tuple[float, float]]:
    """The intervals whose idle capacity is not harvestable (empty when both are included)."""
    if include_outages and include_warmup:
        return []
    return calendar(con, log, outage_min_h).intervals(include_outages, include_warmup)


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


def split(con, log, start=None, hours=None, pool_size=None, include_outages: bool = False,
          include_warmup: bool = False, outage_min_h: float = OUTAGE_MIN_H) -> dict:
    """The idle split of a window and pool (module docstring): node-hours per category, the
    outages and the warm-up inside the window, and what is harvestable."""
    from planner.idle import fragments

    wd = fragments.window_data(con, log, start, hours, pool_size, harvest=False)
    row = fragments._log_row(con, log)
    cal = calendar(con, log, outage_min_h)
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
        "node_hours": {**{s: per[s] * h for s in STATES}, WARMUP: warm_s * h},
        "total_node_hours": total * h,
        "idle_node_hours": idle_s * h,  # every idle node-hour of the window, outages and warm-up included
        "outage_node_hours": outage_s * h,
        "warmup_node_hours": warm_s * h,
        "harvestable_node_hours": harvest * h,
        "harvestable_share_of_idle": harvest / idle_s if idle_s > 0 else None,
        "include_outages": bool(include_outages), "include_warmup": bool(include_warmup),
        "outage_min_hours": float(outage_min_h),
        "outages": [o.to_dict() for o in outs],
        "outage_hours": float(sum(min(o.end_s, t1) - max(o.start_s, t0) for o in outs) * h),
        "log_no_job_running_hours": cal.no_job_running_h,
        "log_longest_gaps_h": list(cal.gaps_h[:5]),
        "warmup": None if wu is None else wu.to_dict(),
        "notes": notes,
    }


PERIODS = {"day": "D", "week": "W-MON", "month": "MS"}  # week: Monday 00:00 to Monday, as XDMoD


def by_period(con, log, period: str = "week", start=None, hours=None, pool_size=None, tz: str = "UTC",
              include_outages: bool = False, include_warmup: bool = False):
    """Node-hours per calendar day, week (Monday to Monday) or month in time zone `tz` (the
    viewer's; IANA name), for the window and pool: columns period (start, tz-aware), hours (of the
    period inside the window), idle_node_hours (every idle node-hour), harvestable_node_hours (as
    every view counts them), excluded_node_hours (outages and warm-up not included), idle_share
    (harvestable / (pool nodes * hours))."""
    import pandas as pd

    from planner.errors import InputError
    from planner.idle import fragments

    if period not in PERIODS:
        raise InputError(f"period must be one of {', '.join(PERIODS)}, got {period!r}", field="period")
    try:
        zone = pd.Timestamp(0, tz=tz).tz
    except Exception:  # noqa: BLE001  (pytz/zoneinfo raise different errors for a bad name)
        raise InputError(f"unknown time zone {tz!r}", field="tz") from None
    raw = fragments.window_data(con, log, start, hours, pool_size, harvest=False)
    hv = fragments.window_data(con, log, start, hours, pool_size, include_outages=include_outages,
                               include_warmup=include_warmup)
    t0, t1 = raw.t0, raw.t1
    first = pd.Timestamp(t0, unit="s", tz="UTC").tz_convert(zone)
    anchor = first.floor("D")
    if period == "week":
        anchor = anchor - pd.Timedelta(days=anchor.weekday())
    elif period == "month":
        anchor = anchor.replace(day=1)
    edges = pd.date_range(anchor, pd.Timestamp(t1, unit="s", tz="UTC").tz_convert(zone) + pd.Timedelta(days=32),
                          freq=PERIODS[period] if period != "week" else "7D", tz=zone)
    e = np.asarray([x.timestamp() for x in edges], dtype=float)
    e = e[(e < t1)]
    e = np.r_[e[e > t0], t1]
    lo = np.r_[t0, e[:-1]]
    hi = e
    idle = np.array([_integral(raw.st, raw.sn, t1, a, b) for a, b in zip(lo, hi)]) / 3600.0
    harv = np.array([_integral(hv.st, hv.sn, t1, a, b) for a, b in zip(lo, hi)]) / 3600.0
    hrs = (hi - lo) / 3600.0
    starts = [pd.Timestamp(a, unit="s", tz="UTC").tz_convert(zone) for a in lo]
    if period == "week":
        starts = [s.floor("D") - pd.Timedelta(days=s.weekday()) for s in starts]
    elif period == "month":
        starts = [s.floor("D").replace(day=1) for s in starts]
    else:
        starts = [s.floor("D") for s in starts]
    return pd.DataFrame({"period": starts, "hours": hrs, "idle_node_hours": idle,
                         "harvestable_node_hours": harv, "excluded_node_hours": idle - harv,
                         "idle_share": harv / np.maximum(raw.nodes * hrs, 1e-12)})
