"""Operator views of a log's idle capacity (the views of Open XDMoD, `sreport`, Grafana).

Every view is over the whole machine (all M nodes of the log) and a window [t0, t1) of the log
(default: the whole log), computed from N(t), the `idle_series` table: the clock views in DuckDB
SQL (named query functions `q_*` with bound parameters; identifiers are fixed strings), the holes
from the stack-rule bands of N(t) (planner.idle.fragments.stack_bands, one pass) binned with NumPy.
Each breakdown sums to the window's idle node-hours, the integral of N(t) over [t0, t1)
(`idle_node_hours`):

- by_hour_weekday: idle node-hours per (day of week, hour of day), 7 x 24 cells, Monday = 0,
  on a clock: a time zone `tz` (IANA name: the wall clock, daylight saving time included: the
  hour skipped in spring covers nothing, the hour repeated in autumn covers two) or, without
  one, UTC shifted by utc_offset_h (a fixed offset, e.g. -5 for US Eastern standard time).
  covered_h is the window time that falls in the cell (so mean idle nodes = idle_node_hours /
  covered_h).
- by_day: idle node-hours per calendar day (same clock), with its covered hours, the day's
  length (day_h: 24, or 23 / 25 on a time zone's daylight saving days), mean idle nodes and idle
  ratio (mean idle nodes / M).
- holes: a hole of size k is a maximal interval during which at least k nodes are idle at once
  (N(t) >= k throughout, N < k just before and after, or the window edge). Every level k of
  N(t) is covered by holes of size k, so the holes of all sizes hold each idle node-second once:
  their node-hours (one node times the hole's length) sum to the idle node-hours. They are the
  stack-rule fragments of planner.idle.fragments (node k of a count-level pool is idle exactly during
  the holes of size k + 1). Binned by size (1, 2-3, 4-7, ... nodes: powers of two) and length
  (LENGTH_EDGES_S); per cell: holes (count) and node_hours. Read a cell "(16-31 nodes, 1-3 h):
  120 node-h" as: 120 idle node-hours lie in intervals where 16 to 31 nodes stood idle together
  for 1 to 3 hours, what a 16-node job of 1 to 3 hours could have used.
- by_partition (job logs with a partition or queue per job; planner.logs.partitions):
  exact-identity logs (node lists): each node's idle time counts toward its home partition
  (basis "node home partition"; "(no partition)" for nodes no job held). Count-level logs (no
  node identity): the idle node-time of each moment goes to the partitions of the jobs waiting
  then, in proportion to the nodes they request; moments with no job waiting go to
  "(no job waiting)" (basis "waiting jobs").
- idle while waiting (job logs with submit times): a job waits over [submit, start). Idle
  node-hours while no job waited (nothing to run: idle_no_wait_node_hours) and while at least
  one did (idle_while_waiting_node_hours), the latter split into moments when no waiting job fit
  in the idle nodes (every waiting job asks for more nodes than N(t): nodes held for a large job,
  sreport's "planned" share; what backfill and harvesting compete for) and moments when one did
  fit (the scheduler's own delay or a reservation).
- compare_logs: idle ratio, equivalent nodes and fragment-length CDFs of several logs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner import times
from planner.errors import InputError
from planner.idle import fragments, outages
from planner.idle.window import Window

HOUR_S = 3600.0
QUARTER_S = 900.0
DAY_S = 86400.0
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# hole lengths: [edge_i, edge_i+1)
LENGTH_EDGES_S = (0.0, 60.0, 600.0, 1800.0, 3600.0, 3 * 3600.0, 6 * 3600.0, 12 * 3600.0, 86400.0,
                  3 * 86400.0, 7 * 86400.0, float("inf"))
LENGTH_LABELS = ("< 1 min", "1-10 min", "10-30 min", "30-60 min", "1-3 h", "3-6 h", "6-12 h", "12-24 h",
                 "1-3 d", "3-7 d", ">= 7 d")


@dataclass(frozen=True)
class Span:
    """A log and window: log_id, name, [t0, t1), machine nodes M, kind, node identity."""
    log_id: int
    log: str
    t0: float
    t1: float
    machine_nodes: int
    kind: str
    node_identity: str

    @property
    def params(self) -> dict:
        return {"log_id": self.log_id, "t0": self.t0, "t1": self.t1}


def span(con, win: Window) -> Span:
    """The log's row and the window (InputError naming the field when absent or outside the log);
    the operator views are of the whole machine: the window's pool size and subset do not apply."""
    row = fragments._log_row(con, fragments._check(win).log)
    t0, t1 = fragments.bounds(row, win)
    return Span(int(row["log_id"]), str(row["name"]), t0, t1, int(row["machine_nodes"]),
                str(row["kind"]), str(row["node_identity"]))


# The step function N(t) clipped to the window: one row per step, [a, b) with n idle nodes.
_STEPS = """
steps AS (
    SELECT greatest(t_s, $t0) AS a, least(nxt, $t1) AS b, idle_nodes AS n FROM (
        SELECT t_s, idle_nodes,
               coalesce(lead(t_s) OVER (ORDER BY t_s), (SELECT end_s FROM logs WHERE log_id = $log_id)) AS nxt
        FROM idle_series WHERE log_id = $log_id)
    WHERE nxt > $t0 AND t_s < $t1 AND nxt > t_s)"""


def q_idle_node_hours(con, sp: Span) -> float:
    """Integral of N(t) over the window (harvestable, as q_steps), node-hours."""
    a, b, n = q_steps(con, sp, ends=True)
    return float(np.sum(n * (b - a)) / 3600.0)


def q_steps(con, sp: Span, ends: bool = False):
    """(start times, idle nodes) of N(t) over the window, the first at t0; with ends, (start
    times, end times, idle nodes). Harvestable capacity: zero in a job log's outages and warm-up
    (planner.idle.split), as every view counts it."""
    r = con.execute(f"WITH {_STEPS} SELECT a, b, n FROM steps ORDER BY a", sp.params).fetchnumpy()
    a, n = np.asarray(r["a"], dtype=float), np.asarray(r["n"], dtype=np.int64)
    b = np.asarray(r["b"], dtype=float)
    if len(a):  # harvestable capacity, as every view: no idle node in a job log's outages and warm-up

        for lo, hi in outages.exclusions(con, sp.log):
            if hi > a[0] and lo < b[-1]:
                a, n = fragments._mask_counts(a, n, a[0], b[-1], lo, hi)
                b = np.r_[a[1:], b[-1]]
    return (a, b, n) if ends else (a, n)


def q_hourly(con, sp: Span, utc_offset_h: float = 0.0, tz: str | None = None) -> pd.DataFrame:
    """Per clock hour the window covers (h: hours since 1970 on the clock: time zone `tz`'s wall
    clock, else UTC shifted by utc_offset_h): idle node-seconds and covered seconds.

    The integrals of N(t) and of 1 over the steps, read at the hour boundaries (the steps do not
    overlap: a running sum of whole steps plus the part of the step a boundary falls in), so the
    work is one pass over the steps plus one per hour (a join of steps with the hours each one
    spans took 2.9 s on a 1-million-job log; this, 0.09 s)."""
    if tz is not None:
        times.zone(tz)  # a clear error for a bad name, even over an empty window
    a, b, n = q_steps(con, sp, ends=True)
    if len(a) == 0:
        return pd.DataFrame({"h": np.zeros(0, dtype=np.int64), "node_s": np.zeros(0), "covered_s": np.zeros(0)})
    # a time zone: quarter hours in UTC (every zone's offset, and every change of it, falls on a
    # quarter hour), each labelled with its wall-clock hour; else whole hours of the shifted clock
    step, off = (QUARTER_S, 0.0) if tz is not None else (HOUR_S, float(utc_offset_h) * HOUR_S)
    a, b = a + off, b + off
    hours = np.arange(int(np.floor(a[0] / step)), int(np.ceil(b[-1] / step)) + 1, dtype=np.int64)
    edges = hours * step
    i = np.searchsorted(a, edges, side="right") - 1  # the step each boundary falls in (or after)
    ok = i >= 0
    j = np.where(ok, i, 0)
    part = np.where(ok, np.clip(edges - a[j], 0.0, b[j] - a[j]), 0.0)  # of step j, before the boundary
    width = b - a
    full_cov = np.concatenate(([0.0], np.cumsum(width)))  # whole steps before step i
    full_node = np.concatenate(([0.0], np.cumsum(n * width)))
    cov = np.where(ok, full_cov[j] + part, 0.0)
    node = np.where(ok, full_node[j] + n[j] * part, 0.0)
    covered_s, node_s = np.diff(cov), np.diff(node)
    keep = covered_s > 0
    if tz is None:
        return pd.DataFrame({"h": hours[:-1][keep], "node_s": node_s[keep], "covered_s": covered_s[keep]})
    lo = edges[:-1][keep]
    h = np.floor((lo + times.utc_offsets_s(lo, tz)) / HOUR_S).astype(np.int64)
    g = pd.DataFrame({"h": h, "node_s": node_s[keep], "covered_s": covered_s[keep]}).groupby("h", sort=True).sum()
    return g.reset_index()


def by_hour_weekday(con, win: Window, utc_offset_h: float = 0.0, tz: str | None = None) -> pd.DataFrame:
    """7 x 24 rows: weekday (0 = Monday), weekday_name, hour, idle_node_hours, covered_h,
    mean_idle_nodes (NaN where the window never covers the cell). Clock: tz, else utc_offset_h."""
    h = q_hourly(con, span(con, win), utc_offset_h, tz)
    hh = h["h"].to_numpy(dtype=np.int64)
    wd = ((hh // 24) + 3) % 7  # 1970-01-01 was a Thursday (Monday = 0)
    grid = np.zeros((7, 24)), np.zeros((7, 24))
    np.add.at(grid[0], (wd, hh % 24), h["node_s"].to_numpy(dtype=float))
    np.add.at(grid[1], (wd, hh % 24), h["covered_s"].to_numpy(dtype=float))
    w, hr = np.meshgrid(np.arange(7), np.arange(24), indexing="ij")
    node_h, cov_h = grid[0].ravel() / HOUR_S, grid[1].ravel() / HOUR_S
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(cov_h > 0, node_h / np.where(cov_h > 0, cov_h, 1.0), np.nan)
    return pd.DataFrame({"weekday": w.ravel(), "weekday_name": [WEEKDAYS[i] for i in w.ravel()],
                         "hour": hr.ravel(), "idle_node_hours": node_h, "covered_h": cov_h,
                         "mean_idle_nodes": mean})


def by_day(con, win: Window, utc_offset_h: float = 0.0, tz: str | None = None) -> pd.DataFrame:
    """One row per calendar day the window touches: day (YYYY-MM-DD), idle_node_hours, covered_h,
    day_h, mean_idle_nodes, idle_ratio. Clock: tz, else utc_offset_h."""
    sp = span(con, win)
    h = q_hourly(con, sp, utc_offset_h, tz)
    d = (h["h"].to_numpy(dtype=np.int64) // 24)
    g = pd.DataFrame({"d": d, "node_s": h["node_s"], "covered_s": h["covered_s"]}).groupby("d").sum()
    midnight = pd.to_datetime(g.index.to_numpy() * DAY_S, unit="s")
    node_h, cov_h = g["node_s"].to_numpy() / HOUR_S, g["covered_s"].to_numpy() / HOUR_S
    mean = node_h / np.where(cov_h > 0, cov_h, 1.0)
    return pd.DataFrame({"day": list(midnight.strftime("%Y-%m-%d")), "idle_node_hours": node_h, "covered_h": cov_h,
                         "day_h": _day_hours(midnight, tz), "mean_idle_nodes": mean,
                         "idle_ratio": mean / sp.machine_nodes})


def _day_hours(midnight: pd.DatetimeIndex, tz: str | None) -> np.ndarray:
    """Each calendar day's length in hours on the clock: 24, or 23 / 25 on a time zone's daylight
    saving days (its midnight to the next, as instants)."""
    if tz is None or len(midnight) == 0:
        return np.full(len(midnight), 24.0)
    zone = times.zone(tz)
    a = midnight.tz_localize(zone, ambiguous=True, nonexistent="shift_forward")
    b = (midnight + pd.Timedelta(days=1)).tz_localize(zone, ambiguous=True, nonexistent="shift_forward")
    return ((b - a).total_seconds() / HOUR_S).to_numpy(dtype=float)


def size_edges(max_nodes: int) -> list[tuple[int, int]]:
    """Hole-size bins (lo, hi) inclusive: 1, 2-3, 4-7, ... up to max_nodes."""
    out, lo = [], 1
    while lo <= max(int(max_nodes), 1):
        out.append((lo, 2 * lo - 1))
        lo *= 2
    return out


def size_label(lo: int, hi: int) -> str:
    return f"{lo:,}" if lo == hi else f"{lo:,}-{hi:,}"


def holes(con, win: Window) -> pd.DataFrame:
    """Holes binned by size and length (module docstring): one row per non-empty cell with
    nodes_min, nodes_max, size (label), length_min_s, length_max_s (inf for the last), length
    (label), holes (count of (size k, interval) holes), node_hours. Sorted by size then length."""
    sp = span(con, win)
    st, sn = q_steps(con, sp)
    lo, s, e, w = fragments.stack_bands(st, sn, sp.t1)  # band: levels lo+1 .. lo+w, over [s, e)
    length = e - s
    li = np.clip(np.searchsorted(LENGTH_EDGES_S, length, side="right") - 1, 0, len(LENGTH_LABELS) - 1)
    rows = []
    for klo, khi in size_edges(int(sn.max()) if len(sn) else 0):
        cnt = np.clip(np.minimum(khi, lo + w) - np.maximum(klo, lo + 1) + 1, 0, None)
        if not cnt.any():
            continue
        nh = np.bincount(li, weights=cnt * length, minlength=len(LENGTH_LABELS)) / HOUR_S
        nc = np.bincount(li, weights=cnt, minlength=len(LENGTH_LABELS))
        for j in np.flatnonzero(nc):
            rows.append({"nodes_min": klo, "nodes_max": khi, "size": size_label(klo, khi),
                         "length_min_s": LENGTH_EDGES_S[j], "length_max_s": LENGTH_EDGES_S[j + 1],
                         "length": LENGTH_LABELS[j], "holes": round(nc[j]), "node_hours": float(nh[j])})
    cols = ["nodes_min", "nodes_max", "size", "length_min_s", "length_max_s", "length", "holes", "node_hours"]
    return pd.DataFrame(rows, columns=cols)


def compare_row(name: str, s: dict) -> dict:
    """One log's comparison row from its planner.idle.fragments summary."""
    fr = s["fragments"]
    return {"log": name, "nodes": s["nodes"], "span_h": s["span_h"], "idle_node_hours": s["idle_node_hours"],
            "eq_nodes": s["eq_nodes"], "idle_ratio": s["idle_ratio"], "fragments": fr["count"],
            "fragment_median_s": fr["median_s"], "derived": fr["derived"]}


def compare_cdf(name: str, frag: pd.DataFrame) -> pd.DataFrame:
    """One log's fragment-length CDF rows from planner.idle.fragments.fragment_lengths."""
    return pd.DataFrame({"log": name, "length_s": frag["length_s"], "cdf_count": frag["cdf_count"],
                         "cdf_nodetime": frag["cdf_nodetime"]})


def compare_logs(con, logs, win: Window = Window()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Several logs side by side (each over `win` with its log replaced, default its whole span,
    whole machine):
    (one row per log: log, nodes, span_h, idle_node_hours, eq_nodes, idle_ratio, fragments,
    fragment_median_s, derived; fragment-length CDF rows: log, length_s, cdf_count, cdf_nodetime)."""
    if not logs:
        raise InputError("pick at least one log to compare", field="logs")
    rows, cdfs = [], []
    for name in dict.fromkeys(logs):
        c = fragments.characterize(con, win.replace(log=name))
        rows.append(compare_row(name, c.summary()))
        cdfs.append(compare_cdf(name, fragments._fragment_df(c)))
    return pd.DataFrame(rows), pd.concat(cdfs, ignore_index=True)
