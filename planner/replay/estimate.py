"""How long a replay, a replay pair or a scenario grid will take, before it starts: the run-time
cost model (the app's Planner and Compare pages show it before Run).

From the size of the instance: the decisions times a cost per decision. The decisions: hours x 60 / f
at the interval cadence; else one per pool event of the window (a log) and one per Trainer arrival and
completion (expected_flow), an arrival that waits for a Pj_max place decided at the completion that
admits it (Flow.decisions); when the Trainers cannot be read before the run,
DECISIONS_PER_EVENT per pool event or FIXED_POOL_DECISIONS_PER_H. For the allocators that answer in
milliseconds (dp, dp-reduced, auto, hull and the heuristics) the cost is measured here, once per
(allocator, Trainers, pool size) and process: the median of three calls on BFTrainer's Fig. 5 decision
with Pj_max Trainers (at most MEASURE_MAX_TRAINERS) on the pool; plus, for every allocator, the
replay's own bookkeeping per decision (REPLAY_MS + REPLAY_MS_PER_KNODE per 1,000 nodes of the pool).

The MILPs (too slow to time before a run) follow a cost model fitted to the wall times of their
decisions in real replays (2-core build machine, 2026-11-26 23:05-23:40 UTC, load 1.7-3.4 from the
lead's work beside it; checked by benchmarks/bench_estimate.py). Their cost follows the Trainers a
decision sees (n), for milp-node the pool, for horizon-milp its horizon T and the pool's contention:
  - milp        MILP_MS + MILP_MS_PER_TRAINER * n      (Summit 6 h at 1,024 nodes: 8.7 ms a decision
                with 10 Trainers and with 48; diverse, 28 Trainers on 256 nodes: 11 ms)
  - milp-node   NODE_MS + NODE_MS_PER_VAR * n * P      (one binary per Trainer and pool node; Summit 1 h
                at 256 nodes: 26 ms at 5-16 idle nodes, 124 ms at 17-64, 288 ms at 65-128, 10 Trainers)
  - horizon-milp (HZ_MS + HZ_MS_PER_BINARY * n * T * L) * K, with L = log2(kmax) + 1 the power-of-two
                levels of a job (kmax = min(Nmax, P)) and the contention factor
                K = 1 + HZ_C * kmax / HZ_KMAX_REF * u^HZ_A * (1 - u)^HZ_B while the jobs' Nmax exceed
                the pool, u = P / (n * Nmax) < 1 (else 1): branch and bound places large jobs in a pool
                that holds a few of them; hardest at u ~ 0.3. ModelArts' Planner link (Philly, Nmax
                mostly 4, 150 nodes, n ~8, they fit): 3.9, 10.4, 15.7, 29 ms a decision at T = 1, 5, 10,
                20; Summit's HPO Trainers (10, Nmax 64, T = 5), by idle nodes: 8 ms at 1-4, 16 ms at
                5-16, 110 ms at 17-64, 535 ms at 65-128, 1.7 s at 129-256 (K fitted on these, per
                decision, over both cadences); a fixed 150-node pool of them: 1.15 s a decision.
P is the pool the decisions see: pool_size on a fixed pool; on a log, POOL_QUANTILES of an exponential
about the window's mean idle nodes (eq_nodes), capped at pool_size (K is far from linear in P). n is
expected_flow()'s: Pj_max, or fewer when the workload's Trainers do not fill it (Little's law on their
own run times at a processor share of the pool; ModelArts' link: 7.2 expected, 8.0 seen). Each MILP
decision is capped at the scenario's solver time limit. A rough figure (ratios 0.61-1.44 on
bench_estimate's 12 scenarios, docs/app.md), shown so that nobody starts a 10-minute run by surprise.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from planner.allocators import ALLOCATORS, AllocOptions, allocate
from planner.allocators.instances import fig5_instance
from planner.errors import InputError
from planner.scenario.pair import labels_for, make_scenario
from planner.scenario.record import build_workload
from planner.scenario.schema import DEFAULTS
from planner.workload import generators

# allocators whose decision may take its whole solver time limit (the MILPs): the cost model below;
# any other one with a solver time limit counts as horizon-milp (the costliest per decision)
TIME_LIMITED = tuple(a.name for a in ALLOCATORS if "time_limit_s" in a.options)
# the MILPs' cost model, ms per decision (module docstring; fitted by benchmarks/bench_estimate.py)
MILP_MS, MILP_MS_PER_TRAINER = 8.5, 0.03
NODE_MS, NODE_MS_PER_VAR = 2.0, 0.35  # milp-node: per Trainer x pool node
HZ_MS, HZ_MS_PER_BINARY = 2.6, 0.055  # horizon-milp: ms, ms per job x step x level
# horizon-milp's contention factor K = 1 + HZ_C (kmax / HZ_KMAX_REF) u^HZ_A (1 - u)^HZ_B, u = P / (n Nmax) < 1
HZ_C, HZ_KMAX_REF, HZ_A, HZ_B = 2.86e4, 64.0, 3.14, 6.04
# a log pool's idle nodes at its decisions: exponential around the window's mean (capped at the pool size),
# taken at these quantiles (Summit 6 h at 1,024 nodes: 17 % of decisions at <= 4 nodes, 18 % above 128, mean 68)
POOL_QUANTILES = tuple((i + 0.5) / 20 for i in range(20))
DEFAULT_NMAX = 64  # a job's Nmax when the workload cannot be read before the run (hpo's, diverse's)
DECISIONS_PER_EVENT = 1.5  # Summit, hpo: 3,340 decisions for 2,163 pool events in a day at 4,734 nodes
# the replay's bookkeeping per decision (node map, rates and records), by the pool's size: 0.2 ms at 4,734 nodes
# (2.6 s for 7,754 decisions, solve 0.14 ms), 0.075 ms at 1,024 (dp 24 h: 0.6 s for 4,676 decisions, solve
# 0.25 s), 0.02 ms at 40 (IBM's link: 0.10 s for 2,061 decisions, solve 0.06 s); bench_estimate, 2026-11-27
REPLAY_MS, REPLAY_MS_PER_KNODE = 0.03, 0.035
MEASURE_MAX_TRAINERS = 200
FIXED_POOL_DECISIONS_PER_H = 150.0  # a fixed pool has no log events: arrivals and completions only
WORKER_START_S = 0.5  # spawn a worker, import the planner, open the database: 0.44 s cold (bench_pages, 2026-11-26
# 18:46 quiet; the app starts a spare worker ahead, so a Run usually pays none of it; 2.0 s before, when the
# default Run's estimate read about 3 s for a 0.6 s run)
LONG_S = 60.0
# the scenario fields that make its Trainers (planner.scenario.record.build_workload)
WORKLOAD_KEYS = ("workload", "seed", "count", "interarrival_s", "arrival", "models", "rup", "rdw", "runtime",
                 "batch_choice")
FIXED_POINT_STEPS = 60
MAX_READ_TRAINERS = 20_000  # more Trainers than this: not read before the run (the older rules); 20,000: 0.1 s


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


def milp_decision_s(allocator: str, trainers: float, pool_nodes: float, horizon_steps: int = 5,
                    nmax: float = DEFAULT_NMAX, time_limit_s: float = math.inf) -> float:
    """Seconds of one MILP decision by the fitted model (module docstring): `trainers` (n) the
    Trainers it sees, `pool_nodes` (P) its pool, horizon-milp's T and the jobs' Nmax; at most the
    solver's time limit."""
    n, pool = max(float(trainers), 0.0), max(float(pool_nodes), 1.0)
    if allocator == "milp":
        ms = MILP_MS + MILP_MS_PER_TRAINER * n
    elif allocator == "milp-node":
        ms = NODE_MS + NODE_MS_PER_VAR * n * pool
    else:  # horizon-milp, and any other allocator with a solver time limit
        kmax = max(1.0, min(float(nmax), pool))
        levels = math.log2(kmax) + 1.0
        u = pool / max(n * float(nmax), 1e-9)  # the pool over what the jobs could use: < 1, they compete
        contention = 1.0 + HZ_C * kmax / HZ_KMAX_REF * u ** HZ_A * (1.0 - u) ** HZ_B if u < 1.0 else 1.0
        ms = (HZ_MS + HZ_MS_PER_BINARY * n * max(int(horizon_steps), 1) * levels) * contention
    return min(ms / 1000.0, float(time_limit_s))


def replay_overhead_s(pool_size: int) -> float:
    """Seconds of the replay's own bookkeeping per decision on a pool of `pool_size` nodes."""
    return (REPLAY_MS + REPLAY_MS_PER_KNODE * max(int(pool_size), 0) / 1000.0) / 1000.0


def pool_points(mean_nodes: float, pool_size: int, varies: bool) -> list[float]:
    """The pools a replay's decisions see: `mean_nodes` on a fixed pool; on a log (varies) the
    POOL_QUANTILES of an exponential of that mean, capped at pool_size."""
    if not varies:
        return [float(mean_nodes)]
    return [min(-float(mean_nodes) * math.log(1.0 - q), float(pool_size)) for q in POOL_QUANTILES]


def per_decision_s(allocator: str, pool_size: int, trainers: float = 10, *, pool_nodes: float | None = None,
                   pool_varies: bool = False, horizon_steps: int = 5, nmax: float = DEFAULT_NMAX,
                   time_limit_s: float = math.inf) -> float:
    """Seconds per decision of a replay: measured (fast allocators: `trainers` Trainers on `pool_size`
    nodes) or the MILPs' model (`trainers` seen, `pool_nodes` in the pool on average, default pool_size;
    pool_varies: a log's pool, pool_points), plus the replay's bookkeeping."""
    if allocator in TIME_LIMITED:  # never timed in the server
        pools = pool_points(pool_size if pool_nodes is None else pool_nodes, pool_size, pool_varies)
        solve = sum(milp_decision_s(allocator, trainers, p, horizon_steps, nmax, time_limit_s)
                    for p in pools) / len(pools)
    else:
        solve = measured_s(allocator, int(trainers), pool_size)
    return solve + replay_overhead_s(pool_size)


@lru_cache(maxsize=16)  # <= ~1 MB each (MAX_READ_TRAINERS)
def _workload_arrays(key: tuple) -> tuple | None:
    """(submit s, work samples, Nmin, Nmax, [(curve, indices)]) of a scenario's Trainers, from its workload fields
    (`key`: sorted (field, value) pairs); None when they are not read before the run (a workload that is
    not a built-in one, arrivals from the log, more than MAX_READ_TRAINERS)."""
    fields = dict(key)
    # only the built-in workloads: a path (the CLI's Trainer CSV, an uploaded one) is read by the run's
    # budgeted worker, never by the page's server process (a URL could name /dev/zero)
    if (fields.get("workload") not in generators.names() or fields.get("arrival") == "log"
            or (fields.get("count") or 0) > MAX_READ_TRAINERS):
        return None
    try:
        specs = build_workload(make_scenario(fields, "greedy"))
    except (InputError, ValueError, OSError):
        return None
    curves = {}
    for i, t in enumerate(specs):
        curves.setdefault(t.curve, []).append(i)
    return (np.array([t.submit_s for t in specs], float), np.array([t.work_samples for t in specs], float),
            np.array([t.nmin for t in specs], float), np.array([t.nmax for t in specs], float),
            [(c, np.array(idx)) for c, idx in curves.items()])


def workload_of(sc: Mapping) -> tuple | None:
    """_workload_arrays of the scenario dict `sc` (its missing workload fields at their defaults)."""
    return _workload_arrays(tuple(sorted((k, sc.get(k, DEFAULTS[k])) for k in WORKLOAD_KEYS)))


@dataclass(frozen=True)
class Flow:
    """What a scenario's Trainers do in its window, before it runs (expected_flow)."""

    trainers: float  # seen by a decision on average (at most Pj_max)
    arrivals: int  # submission times in the window (Trainers submitted at once: one)
    completions: float  # done in the window
    waiting: float = 0.0  # share of the arrivals that wait for a Pj_max place: 1 - Pj_max / demand

    @property
    def decisions(self) -> float:
        """A decision per arrival and per completion; a waiting arrival is decided at the completion
        that admits it (one decision for both)."""
        return self.arrivals + self.completions - self.waiting * min(self.arrivals, self.completions)


def expected_flow(sc: Mapping, pool_nodes: float) -> Flow | None:
    """The Trainers a decision sees on average (Pj_max, or fewer when the workload's Trainers do not fill
    it), the arrivals and completions in the window and the share of arrivals that wait; None when the
    Trainers cannot be read before the run. Little's law over the window: the demand n = sum_i min(run
    time_i, window left at its submission) / window, each Trainer's run time its work at its rate on a
    processor share of the pool (pool_nodes / min(Pj_max, n), within its Nmin..Nmax); the smallest fixed
    point from n = 1. A demand above Pj_max: that many Trainers would run at once, Pj_max do, and an
    arrival waits with probability 1 - Pj_max / demand (the waits are not added to the run times)."""
    pj_max = float(sc.get("pj_max", DEFAULTS["pj_max"]))
    arrays = workload_of(sc)
    if arrays is None:
        return None
    submit, work, nmin, nmax, groups = arrays
    window_s = float(sc["hours"]) * 3600.0
    inside = submit < window_s
    if window_s <= 0 or not inside.any():
        return Flow(0.0, 0, 0.0)
    left = np.clip(window_s - submit, 0.0, window_s)
    admitted, demand, run_s = 1.0, 1.0, np.full_like(work, np.inf)
    for _ in range(FIXED_POINT_STEPS):
        share = np.clip(float(pool_nodes) / max(1.0, admitted), nmin, nmax)
        rate = np.empty_like(work)
        for curve, idx in groups:  # one np.interp per distinct curve
            rate[idx] = np.interp(share[idx], curve.nodes, curve.samples_per_s)
        run_s = np.divide(work, rate, out=np.full_like(work, np.inf), where=rate > 0)
        demand = float(np.minimum(run_s, left).sum() / window_s)
        new = min(pj_max, demand)
        done = abs(new - admitted) <= 1e-3 * max(admitted, 1.0)
        admitted = new
        if done:
            break
    waiting = max(0.0, 1.0 - pj_max / demand) if demand > 0 else 0.0
    return Flow(admitted, len(np.unique(submit[inside])), float((run_s <= left)[inside].sum()), waiting)


def expected_trainers(sc: Mapping, pool_nodes: float) -> float:
    """expected_flow's Trainers a decision sees (Pj_max when the Trainers cannot be read before the run)."""
    flow = expected_flow(sc, pool_nodes)
    return float(sc.get("pj_max", DEFAULTS["pj_max"])) if flow is None else flow.trainers


def mean_nmax(sc: Mapping) -> float:
    """The mean Nmax of the scenario's Trainers (DEFAULT_NMAX when they cannot be read before the run)."""
    arrays = workload_of(sc)
    return float(arrays[3].mean()) if arrays is not None and len(arrays[3]) else float(DEFAULT_NMAX)


def replay_estimate(sc: Mapping, window_summary: Mapping | None) -> Estimate:
    """sc: a scenario dict with its `baseline` (the pair run by planner.scenario.pair.run_pair);
    window_summary: planner.idle.fragments.summary of its window (log pool)."""
    labels = labels_for(sc)
    pool_size = int(sc["pool_size"])
    pool = float(pool_size)  # the pool a decision sees: the window's mean idle nodes on a log
    events = None
    if window_summary is not None and window_summary.get("events") is not None:
        events = float(window_summary["events"])
        pool = min(pool, float(window_summary.get("eq_nodes") or pool))
    flow = expected_flow(sc, pool)
    if sc.get("cadence") == "interval":  # one decision every f minutes, whatever the events (ModelArts, IBM)
        decisions = 60.0 * float(sc["hours"]) / float(sc["step_min"])
        basis = f"a decision every {float(sc['step_min']):g} min over {float(sc['hours']):g} h"
    elif flow is not None:  # a decision per pool event, arrival and completion (Flow.decisions). Summit hpo 6 h
        # at 1,024 nodes: 901 decisions for 287 pool events and 600 arrivals (908 counted); 24 h: 2,341 for 1,298
        # and 1,000 (2,358); IBM's link: 1,032 (1,029); Elan's (Pj_max 10,000): 949 for 468 arrivals and their
        # completions; diverse with Pj_max 30 on 256 nodes: 472 for 300 arrivals (477)
        decisions = (events or 0.0) + flow.decisions
        basis = (f"{int(events):,} pool events, " if events is not None else f"{float(sc['hours']):g} h of a fixed "
                 "pool, ") + f"{flow.arrivals:,} arrivals"
    elif events is not None:
        decisions = DECISIONS_PER_EVENT * events
        basis = f"{int(events):,} pool events"
    else:
        decisions = FIXED_POOL_DECISIONS_PER_H * float(sc["hours"])
        basis = f"{float(sc['hours']):g} h of a fixed pool"
    seen = ""
    kw = {}
    n = float(sc["pj_max"]) if flow is None else flow.trainers
    if any(a in TIME_LIMITED for a in labels):  # the MILPs' model: the Trainers and the pool a decision sees
        kw = dict(pool_nodes=pool, pool_varies=events is not None,
                  horizon_steps=int(sc.get("horizon_steps", DEFAULTS["horizon_steps"])),
                  nmax=mean_nmax(sc), time_limit_s=float(sc.get("time_limit", DEFAULTS["time_limit"])))
        seen = f", ~{n:,.0f} Trainers at a time"
    compute = sum(decisions * (per_decision_s(a, pool_size, n, **kw) if a in TIME_LIMITED
                               else per_decision_s(a, pool_size, int(sc["pj_max"]))) for a in labels)
    total = WORKER_START_S + compute
    text = (f"Estimate: about {_fmt_s(total)} ({basis}, ~{decisions:,.0f} decisions x {len(labels)} "
            f"allocator(s) at {pool_size:,} nodes{seen}).")
    if total >= LONG_S:
        text = "Long run. " + text + " It runs in the background and can be cancelled."
    return Estimate(total, decisions, text)


def sweep_estimate(cells: list[Mapping], hours: float, events: float | None, workers: int,
                   trainers: int = 10, window_summary: Mapping | None = None) -> Estimate:
    """cells: [{allocator, pool_size, ...}]; events: pool events of the window (None: unknown);
    trainers: Pj_max; window_summary: planner.idle.fragments.summary of the whole machine's window (a
    log): a MILP cell's decisions then see its share of the idle nodes, eq_nodes x pool_size / nodes
    (Summit 6 h from 2021-02-10T20:21Z: 296.9 idle of 4,734 nodes; 8.6, 34.1, 64.2 in the first 128,
    512, 1,024), spread as on a Planner log pool; without it, the whole pool_size."""
    decisions = DECISIONS_PER_EVENT * events if events is not None else FIXED_POOL_DECISIONS_PER_H * hours
    idle_share = None
    if window_summary is not None and window_summary.get("eq_nodes") is not None and window_summary.get("nodes"):
        idle_share = float(window_summary["eq_nodes"]) / float(window_summary["nodes"])

    def cost(allocator: str, pool_size: int) -> float:
        if allocator in TIME_LIMITED and idle_share is not None:
            return per_decision_s(allocator, pool_size, trainers, pool_nodes=min(1.0, idle_share) * pool_size,
                                  pool_varies=True)
        return per_decision_s(allocator, pool_size, trainers)

    per_cell = [WORKER_START_S / 2 + decisions * cost(str(c["allocator"]), int(c["pool_size"])) for c in cells]
    total = WORKER_START_S + sum(per_cell) / max(int(workers), 1)
    text = f"Estimate: about {_fmt_s(total)} for {len(cells)} cells on {workers} worker(s)."
    if total >= LONG_S:
        text = "Long grid. " + text + " It runs in the background and can be cancelled."
    return Estimate(total, decisions * len(cells), text)
