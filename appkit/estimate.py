"""How long a Planner replay or a Compare grid will take, before it starts (pure: no Streamlit).

From the size of the instance: the events in the window (from the log), about three allocator
decisions per event (pool change, Trainer arrival, completion), and a cost per decision per
allocator measured on the 2-core build machine for 6 h of Summit at 1024 nodes
(`planner simulate`, 2026-11-23, the machine shared with other jobs):
dp 0.45 ms, equal-share 0.25 ms, greedy 0.33 ms, marginal-gain 0.62 ms, milp 14 ms. The node-level
MILP and the rolling-horizon MILP are slower by orders of magnitude. Costs grow with the pool size
(dp and milp-node linearly, the others about with its square root). A rough figure (within a
factor of 2-3 either way), shown so that nobody starts a 10-minute run by surprise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

MS_PER_DECISION = {"dp": 0.45, "equal-share": 0.25, "greedy": 0.33, "marginal-gain": 0.62, "milp": 14.0,
                   "milp-node": 400.0, "horizon-milp": 250.0}
LINEAR_IN_POOL = ("dp", "milp-node")
DECISIONS_PER_EVENT = 3.0
FIXED_POOL_DECISIONS_PER_H = 150.0  # a fixed pool has no log events: arrivals and completions only
WORKER_START_S = 2.0  # spawn a worker, import the planner, open the database
LONG_S = 60.0


@dataclass(frozen=True)
class Estimate:
    seconds: float
    decisions: float
    text: str

    @property
    def long(self) -> bool:
        return self.seconds >= LONG_S


def _fmt_s(s: float) -> str:
    return f"{s:,.0f} s" if s < 120 else f"{s / 60:,.1f} min"


def per_decision_s(allocator: str, pool_size: int) -> float:
    ms = MS_PER_DECISION.get(allocator, 5.0)
    scale = pool_size / 1024.0
    return ms / 1000.0 * (scale if allocator in LINEAR_IN_POOL else math.sqrt(max(scale, 1e-3)))


def replay_estimate(sc: Mapping, window_summary: Mapping | None) -> Estimate:
    """sc: the Planner scenario; window_summary: planner.fragments.summary of its window (log pool)."""
    from appkit.runs import labels_for

    if window_summary is not None and window_summary.get("events") is not None:
        decisions = DECISIONS_PER_EVENT * float(window_summary["events"])
        basis = f"{int(window_summary['events']):,} pool events"
    else:
        decisions = FIXED_POOL_DECISIONS_PER_H * float(sc["hours"])
        basis = f"{float(sc['hours']):g} h of a fixed pool"
    labels = labels_for(sc)
    compute = sum(decisions * per_decision_s(a, int(sc["pool_size"])) for a in labels)
    total = WORKER_START_S + compute
    text = (f"Estimate: about {_fmt_s(total)} ({basis}, ~{decisions:,.0f} decisions x {len(labels)} "
            f"allocator(s) at {int(sc['pool_size']):,} nodes).")
    if total >= LONG_S:
        text = "Long run. " + text + " It runs in the background and can be cancelled."
    return Estimate(total, decisions, text)


def sweep_estimate(cells: list[Mapping], hours: float, events: float | None, workers: int) -> Estimate:
    """cells: [{allocator, pool_size, ...}]; events: pool events of the window (None: unknown)."""
    decisions = DECISIONS_PER_EVENT * events if events is not None else FIXED_POOL_DECISIONS_PER_H * hours
    per_cell = [WORKER_START_S / 2 + decisions * per_decision_s(str(c["allocator"]), int(c["pool_size"]))
                for c in cells]
    total = WORKER_START_S + sum(per_cell) / max(int(workers), 1)
    text = f"Estimate: about {_fmt_s(total)} for {len(cells)} cells on {workers} worker(s)."
    if total >= LONG_S:
        text = "Long grid. " + text + " It runs in the background and can be cancelled."
    return Estimate(total, decisions * len(cells), text)
