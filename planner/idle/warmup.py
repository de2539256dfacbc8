"""Warm-up of a job log: its first hours, while the machine fills up with jobs, look idle.

A job log only knows the jobs that started inside it, so at its start the machine looks empty
and fills up over hours (ANL Theta's 2022 log: 85 % idle on its first day against about 10 %
after). That idle capacity is an artefact of the log, not capacity to harvest. `detect` finds
such a start in the idle series N(t) (a step function) so that a caller can flag it and start
windows after it.

Excluding a warm-up has one rule, applied the same way by every page and command (there is no
second, per-workspace switch any more): planner.idle.split leaves it out of harvestable capacity
unless include_warmup, and `default_start_s` is where a window on a log starts by default (after
a detected warm-up: it has nothing to compete for).

Rule (pure, on hourly time-weighted idle shares of the machine):
- steady level = median share over the log after its first quarter;
- a warm-up needs the first hour at least `min_excess` (0.25) above the steady level;
- it ends at the first hour whose share is back within `settle` (a quarter) of the first hour's
  excess over the steady level, and must end within the first `max_share` (30 %) of the log.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class Warmup:
    detected: bool
    start_s: float
    end_s: float  # == start_s when nothing was detected
    idle_share_during: float  # mean idle share of the machine in the warm-up (or the first hour)
    idle_share_after: float  # the steady level: median hourly share after the first quarter

    @property
    def hours(self) -> float:
        return (self.end_s - self.start_s) / 3600.0

    def to_dict(self) -> dict:
        return {**asdict(self), "hours": self.hours}


def hourly_shares(t_s, idle_nodes, machine_nodes: int, bin_s: float = 3600.0) -> tuple[np.ndarray, np.ndarray]:
    """(bin starts, time-weighted mean idle share per bin) of a step series that ends at t_s[-1]."""
    t = np.asarray(t_s, dtype=float)
    n = np.asarray(idle_nodes, dtype=float)
    if len(t) < 2 or machine_nodes <= 0 or not t[-1] > t[0]:
        return np.empty(0), np.empty(0)
    edges = np.arange(t[0], t[-1], bin_s)
    edges = np.r_[edges, t[-1]]
    cum = np.r_[0.0, np.cumsum(np.diff(t) * n[:-1])]

    def integral(x):
        i = np.clip(np.searchsorted(t, x, side="right") - 1, 0, len(t) - 1)
        return cum[i] + (x - t[i]) * n[i]

    widths = np.diff(edges)
    share = np.diff(integral(edges)) / np.where(widths > 0, widths, 1.0) / float(machine_nodes)
    return edges[:-1], np.clip(share, 0.0, 1.0)


def detect(t_s, idle_nodes, machine_nodes: int, *, bin_s: float = 3600.0, min_excess: float = 0.25,
           settle: float = 0.25, max_share: float = 0.3, min_bins: int = 8) -> Warmup:
    """The warm-up at the start of the series N(t) (epoch s, idle nodes), if any."""
    t = np.asarray(t_s, dtype=float)
    start = float(t[0]) if len(t) else 0.0
    starts, share = hourly_shares(t, idle_nodes, machine_nodes, bin_s)
    none = Warmup(False, start, start, float(share[0]) if len(share) else 0.0,
                  float(np.median(share)) if len(share) else 0.0)
    if len(share) < min_bins:
        return none
    steady = float(np.median(share[len(share) // 4:]))
    none = Warmup(False, start, start, float(share[0]), steady)
    excess = share[0] - steady
    if excess < min_excess:
        return none
    settled = np.flatnonzero(share <= steady + settle * excess)
    if not len(settled):
        return none
    end_bin = int(settled[0])
    if end_bin == 0 or end_bin > max_share * len(share):
        return none
    return Warmup(True, start, float(starts[end_bin]), float(share[:end_bin].mean()), steady)


# ---- excluding a warm-up



def default_start_s(log_start_s: float, detection: Mapping | None) -> float:
    """Where a window on a log starts by default: after a detected warm-up (a window inside it
    has nothing to compete for), else at the log's start."""
    d = detection or {}
    if d.get("detected") and float(d.get("end_s", log_start_s)) > float(log_start_s):
        return float(d["end_s"])
    return float(log_start_s)
