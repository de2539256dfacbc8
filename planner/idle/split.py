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
  back.
- Partition-wide outages (job logs with a partition per job: SWF field 16, sacct Partition, a job
  CSV's partition column): periods of at least `OUTAGE_MIN_H` hours, between a partition's first
  job start and its last job end, in which no job of that partition runs while other jobs of the
  machine run throughout (planner.idle.outages.partition_outages), labelled with the same reasons.
  They are listed in the split (`partition_outages`) and excluded from that partition's
  harvestable capacity in the by-partition view (planner.idle.job_views.by_partition:
  outage_node_hours, harvestable_node_hours); the machine's split does not subtract them, since
  a job log without node lists does not say how many nodes each partition has.

Definitions for a window [t0, t1) and a pool of the first K nodes (count-level logs: N(t) scaled
to K as in planner.idle.fragments): total = K * span; idle = integral of the pool's idle count;
node_hours partitions the total: allocated + idle + down + planned_down + reserved + drained +
warmup, where (logs without states) planned_down = the outages' idle node-hours, warmup = the
warm-up's idle node-hours outside outages, idle = the rest of the idle node-hours;
harvestable = idle + planned_down if include_outages + warmup if include_warmup.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner import times
from planner.errors import InputError
from planner.idle import fragments
from planner.idle.fragments import _integral, _state_seconds  # noqa: F401
from planner.idle.fragments import idle_split as split  # noqa: F401  (the split of a window)
from planner.idle.outages import (  # noqa: F401  (re-exported: the split's vocabulary in one place)
    OUTAGE_MIN_H,
    WAIT_SLACK_S,
    Calendar,
    Outage,
    PartitionOutage,
    calendar,
    detect_outages,
    exclusions,
    full_idle_gaps,
    harvest_start_s,
    has_states,
    partition_outages,
)
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
from planner.idle.window import Window

WARMUP = "warmup"  # the split's extra category: a job log's warm-up (not a node state)
LABEL_WARMUP = "warm-up (log artefact)"
PERIODS = {"day": "D", "week": "W-MON", "month": "MS"}  # week: Monday 00:00 to Monday, as XDMoD


def by_period(con, win: Window, period: str = "week", tz: str = "UTC", include_outages: bool = False,
              include_warmup: bool = False):
    """Node-hours per calendar day, week (Monday to Monday) or month in time zone `tz` (the
    viewer's; IANA name), for the window and pool: columns period (start, tz-aware), hours (of the
    period inside the window), idle_node_hours (every idle node-hour), harvestable_node_hours (as
    every view counts them), excluded_node_hours (outages and warm-up not included), idle_share
    (harvestable / (pool nodes * hours))."""
    if period not in PERIODS:
        raise InputError(f"period must be one of {', '.join(PERIODS)}, got {period!r}", field="period")
    zone = times.zone(tz)
    win = fragments._check(win).replace(subset="first", seed=0)  # the first K nodes, as the idle split
    raw = fragments.window_data(con, win, harvest=False)
    hv = fragments.window_data(con, win, include_outages=include_outages, include_warmup=include_warmup)
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
