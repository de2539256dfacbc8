"""How long a replay, a replay pair or a scenario grid will take, before it starts: the run-time
cost table (the app's Planner and Compare pages show it before Run).

From the size of the instance: the events in the window (from the log), DECISIONS_PER_EVENT
allocator decisions per event, and a cost per decision. For the allocators that answer in
milliseconds (dp, dp-reduced, auto, hull and the heuristics) that cost is measured here, once per
(allocator, Trainers, pool size) and process: the median of three calls on BFTrainer's Fig. 5
decision with Pj_max Trainers (at most MEASURE_MAX_TRAINERS) on the pool, plus the replay's own
bookkeeping per decision (REPLAY_MS_PER_DECISION). The MILPs keep a table measured on the
2-core build machine for 6 h of Summit at 1024 nodes (`planner simulate`, 2026-11-23): milp
14 ms, the node-level MILP and the rolling-horizon MILP slower by orders of magnitude, scaled
with the pool size (milp-node linearly, the others about with its square root). A rough figure
(within a factor of 2-3 either way), shown so that nobody starts a 10-minute run by surprise.
Checked against runs in docs/app.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from planner.allocators import ALLOCATORS, AllocOptions, allocate
from planner.allocators.instances import fig5_instance
from planner.scenario.pair import labels_for

# allocators whose decision may take its whole solver time limit (the MILPs)
TIME_LIMITED = tuple(a.name for a in ALLOCATORS if "time_limit_s" in a.options)
# the MILPs (too slow to measure before a run): ms per decision at 1024 nodes; any other
# allocator with a solver time limit (TIME_LIMITED) counts as the slowest of them
MS_PER_DECISION = {"milp": 14.0, "milp-node": 400.0, "horizon-milp": 250.0}
LINEAR_IN_POOL = ("milp-node",)
DECISIONS_PER_EVENT = 1.5  # Summit, hpo: 3,340 decisions for 2,163 pool events in a day at 4,734 nodes
REPLAY_MS_PER_DECISION = 0.2  # node map, rates and records (2.6 s for 7,754 decisions, solve 0.14 ms)
MEASURE_MAX_TRAINERS = 200
FIXED_POOL_DECISIONS_PER_H = 150.0  # a fixed pool has no log events: arrivals and completions only
WORKER_START_S = 0.5  # spawn a worker, import the planner, open the database: 0.44 s cold (bench_pages, 2026-11-26
# 18:46 quiet; the app starts a spare worker ahead, so a Run usually pays none of it; 2.0 s before, when the
# default Run's estimate read about 3 s for a 0.6 s run)
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


@lru_cache(maxsize=256)
def measured_s(allocator: str, trainers: int, pool_size: int) -> float:
    """Median wall time of three calls of `allocator` on a Fig. 5 decision of that size."""
    state = fig5_instance(max(1, min(int(trainers), MEASURE_MAX_TRAINERS)), max(1, int(pool_size)), seed=0)
    opts = AllocOptions()
    allocate(allocator, state, opts)  # imports and caches
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        allocate(allocator, state, opts)
        times.append(time.perf_counter() - t0)
    return sorted(times)[1]


def per_decision_s(allocator: str, pool_size: int, trainers: int = 10) -> float:
    """Seconds per decision of a replay: measured (fast allocators) or from the MILP table."""
    if allocator in MS_PER_DECISION or allocator in TIME_LIMITED:  # never timed in the server
        scale = pool_size / 1024.0
        ms = MS_PER_DECISION.get(allocator, max(MS_PER_DECISION.values()))
        ms *= scale if allocator in LINEAR_IN_POOL else math.sqrt(max(scale, 1e-3))
        return ms / 1000.0
    return measured_s(allocator, trainers, pool_size) + REPLAY_MS_PER_DECISION / 1000.0


def replay_estimate(sc: Mapping, window_summary: Mapping | None) -> Estimate:
    """sc: a scenario dict with its `baseline` (the pair run by planner.scenario.pair.run_pair);
    window_summary: planner.idle.fragments.summary of its window (log pool)."""
    if sc.get("cadence") == "interval":  # one decision every f minutes, whatever the events (ModelArts, IBM)
        decisions = 60.0 * float(sc["hours"]) / float(sc["step_min"])
        basis = f"a decision every {float(sc['step_min']):g} min over {float(sc['hours']):g} h"
    elif window_summary is not None and window_summary.get("events") is not None:
        decisions = DECISIONS_PER_EVENT * float(window_summary["events"])
        basis = f"{int(window_summary['events']):,} pool events"
    else:
        decisions = FIXED_POOL_DECISIONS_PER_H * float(sc["hours"])
        basis = f"{float(sc['hours']):g} h of a fixed pool"
    labels = labels_for(sc)
    compute = sum(decisions * per_decision_s(a, int(sc["pool_size"]), int(sc["pj_max"])) for a in labels)
    total = WORKER_START_S + compute
    text = (f"Estimate: about {_fmt_s(total)} ({basis}, ~{decisions:,.0f} decisions x {len(labels)} "
            f"allocator(s) at {int(sc['pool_size']):,} nodes).")
    if total >= LONG_S:
        text = "Long run. " + text + " It runs in the background and can be cancelled."
    return Estimate(total, decisions, text)


def sweep_estimate(cells: list[Mapping], hours: float, events: float | None, workers: int,
                   trainers: int = 10) -> Estimate:
    """cells: [{allocator, pool_size, ...}]; events: pool events of the window (None: unknown);
    trainers: Pj_max."""
    decisions = DECISIONS_PER_EVENT * events if events is not None else FIXED_POOL_DECISIONS_PER_H * hours
    per_cell = [WORKER_START_S / 2 + decisions * per_decision_s(str(c["allocator"]), int(c["pool_size"]), trainers)
                for c in cells]
    total = WORKER_START_S + sum(per_cell) / max(int(workers), 1)
    text = f"Estimate: about {_fmt_s(total)} for {len(cells)} cells on {workers} worker(s)."
    if total >= LONG_S:
        text = "Long grid. " + text + " It runs in the background and can be cancelled."
    return Estimate(total, decisions * len(cells), text)
