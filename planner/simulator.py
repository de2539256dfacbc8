"""Event-driven replay of a pool with a stream of elastic Trainers under any allocator.

`simulate(pool, specs, allocator="dp", opts=None, pj_max=10, cadence="events", ...)` runs one
replay and returns a SimResult: DataFrames `timeline`, `trainers`, `decisions`,
`preemptions` and the JSON-ready `summary` (computed by planner.metrics from those records).

All times inside a SimResult are seconds since the window start (`pool.start_s`); Trainer
submit times (planner.workloads) are on the same clock.

Semantics (docs/simulator.md has the long form):

- Events are the pool's events inside the window (the idle set changes), Trainer arrivals,
  Trainer completions and, with cadence `interval`, the decision ticks every `step_min`
  minutes. Things at the same instant are one event. At each event, in this order:
  1. every running Trainer is credited the samples of the interval since the last event at
     its current size's throughput O_j(n), minus pending costs (below);
  2. Trainers whose work is done leave (a completion time is computed exactly from the
     current rates and scheduled as an event, so completions land on their own instant);
  3. the pool changes: joining nodes become idle; nodes that leave preempt exactly the
     Trainers holding them: each such Trainer pays Rdw seconds of its pre-change
     throughput and shrinks; if it falls below Nmin it drops to 0 nodes (its other nodes go
     back to the free pool);
  4. arrived Trainers queue; queued Trainers are admitted FCFS while fewer than Pj_max are
     admitted (an admitted Trainer keeps its slot until it completes, even at 0 nodes);
  5. cadence `events`: if any Trainer is admitted, the allocator decides (AllocState: pool =
     all idle node ids, Trainers = the admitted ones with the nodes they hold);
     cadence `interval`: at a tick the allocator decides; between ticks admitted Trainers
     without nodes are started at once, FCFS, each with as many free nodes as possible
     within Nmin..Nmax (stopping at the first that does not fit), and completions simply
     free their nodes; pool leaves still preempt at once.
- Costs: a decision that changes a Trainer's node count from c to k costs Rup (k > c) or
  Rdw (k < c) seconds of its pre-change throughput O(c) (so starting from 0 is free);
  preemption costs Rdw seconds of O(c). A cost is pending until paid: it is taken from the
  samples the Trainer produces in the following interval(s), never more than an interval
  produces, the remainder carried over (preemption costs first, then rescale costs, then
  solve-idle costs). Costs still pending at the window end were never paid and are reported
  as incurred but not as charged.
- `idle_during_solve`: nodes a decision moves stay idle for the decision's wall time: a
  Trainer that grows pays (O(k) - O(c)) * wall seconds as a solve-idle cost.
- The allocator's wall time (around the allocate call) is recorded per decision, with the
  build/solve seconds it reports itself.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from planner.allocators.base import AllocOptions, AllocResult, AllocState, TrainerState
from planner.pool import PoolTrace
from planner.trainers import TrainerSpec

CADENCES = ("events", "interval")
_PRE, _RESC, _IDLE = 0, 1, 2


@dataclass
class SimResult:
    summary: dict
    timeline: pd.DataFrame
    trainers: pd.DataFrame
    decisions: pd.DataFrame
    preemptions: pd.DataFrame
    scenario: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return self.summary


class _Run:
    """One Trainer during a replay (mutable bookkeeping).

    `rate` is O(n) at its current size (what costs are charged on); `prod` is the rate at
    which it makes progress: `rate`, or 0 once a bug job hangs. `current` is `nodes` sorted
    (what the allocator is shown), kept by set_nodes so unchanged Trainers are not re-sorted
    at every decision.
    """

    __slots__ = ("spec", "idx", "nodes", "current", "rate", "done_samples", "pend", "paid", "incurred",
                 "start_s", "end_s", "node_s", "rescales", "preemptions", "max_nodes", "admit_s",
                 "curve_tab", "target", "fate", "hung", "budget_node_s", "outcome", "eta_factor")

    def __init__(self, spec: TrainerSpec, idx: int):
        self.spec = spec
        self.idx = idx
        self.nodes: set[int] = set()
        self.current: tuple[int, ...] = ()
        self.rate = 0.0
        self.done_samples = 0.0
        self.pend = [0.0, 0.0, 0.0]
        self.paid = [0.0, 0.0, 0.0]
        self.incurred = [0.0, 0.0, 0.0]
        self.start_s = math.nan
        self.end_s = math.nan
        self.admit_s = math.nan
        self.node_s = 0.0
        self.rescales = 0
        self.preemptions = 0
        self.max_nodes = 0
        self.curve_tab = spec.curve.table(max(spec.nmax, 1))
        meta = spec.meta or {}
        self.eta_factor = float(meta.get("eta_factor", 1.0))
        # ModelArts' robustness study (planner.allocators.horizon_milp.perturb_workload):
        # a killed job leaves at kill_at_frac of its work; a bug job hangs at hang_at_frac,
        # keeps its nodes until it has used its seen ETA in node-hours, then leaves.
        self.fate = "complete"
        self.target = float(spec.work_samples)
        if meta.get("kill_at_frac") is not None:
            self.fate, self.target = "kill", float(meta["kill_at_frac"]) * spec.work_samples
        elif meta.get("hang_at_frac") is not None:
            self.fate, self.target = "hang", float(meta["hang_at_frac"]) * spec.work_samples
        self.hung = False
        self.budget_node_s = self.seen_eta_node_h(spec.work_samples) * 3600.0
        self.outcome = ""

    def o(self, n: int) -> float:
        return float(self.curve_tab[min(n, len(self.curve_tab) - 1)])

    def seen_eta_node_h(self, remaining: float) -> float:
        """The ETA (remaining demand in node-hours) the allocator sees, noise included."""
        s = self.spec
        if s.eta_node_h is not None:  # already noisy (perturb_workload scales it)
            return s.eta_node_h * remaining / s.work_samples
        one = self.o(1)
        return remaining / one / 3600.0 * self.eta_factor if one > 0 else math.inf

    @property
    def prod(self) -> float:
        return 0.0 if self.hung else self.rate

    def set_nodes(self, nodes: set[int], now: float):
        self.nodes = nodes
        self.current = tuple(sorted(nodes))
        n = len(nodes)
        self.rate = self.o(n)
        if n:
            if math.isnan(self.start_s):
                self.start_s = now
            self.max_nodes = max(self.max_nodes, n)

    def remaining(self) -> float:
        return self.spec.work_samples - self.done_samples

    def time_to_finish(self) -> float:
        """Seconds until it leaves at the current size: its target reached (or, hung, its budget used)."""
        if self.hung:
            n = len(self.nodes)
            return max(self.budget_node_s - self.node_s, 0.0) / n if n else math.inf
        if self.rate <= 0:
            return math.inf
        return (max(self.target - self.done_samples, 0.0) + sum(self.pend)) / self.rate

    def reached(self, now: float) -> bool:
        if self.hung:
            return bool(self.nodes) and (self.node_s >= self.budget_node_s - 1e-6
                                         or now + self.time_to_finish() <= now)
        if self.rate <= 0:
            return False
        return ((self.target - self.done_samples <= _finish_tol(self.spec.work_samples)
                 and sum(self.pend) <= 1e-6) or now + self.time_to_finish() <= now)

    def credit(self, dt: float) -> float:
        """Run dt seconds at the current size; pay pending costs first. Returns gross samples."""
        self.node_s += len(self.nodes) * dt
        gross = self.prod * dt
        if gross <= 0:
            return 0.0
        left = gross
        for b in (_PRE, _RESC, _IDLE):
            if self.pend[b] > 0 and left > 0:
                pay = min(self.pend[b], left)
                self.pend[b] -= pay
                self.paid[b] += pay
                left -= pay
        self.done_samples += left
        return gross

    def charge(self, bucket: int, samples: float):
        if samples > 0:
            self.pend[bucket] += samples
            self.incurred[bucket] += samples


def _finish_tol(work: float) -> float:
    return 1e-9 * work + 1e-6


def _resolve_allocator(allocator):
    if callable(allocator):
        return getattr(allocator, "__name__", "custom"), allocator
    from planner.allocators import get

    fn = get(allocator)
    return allocator, fn


def simulate(pool: PoolTrace, specs: list[TrainerSpec], allocator: str | Callable = "dp",
             opts: AllocOptions | None = None, pj_max: int = 10, cadence: str = "events",
             step_min: float = 5.0, idle_during_solve: bool = False, scaling_delay_s: float = 0.0,
             progress: Callable[[float], None] | None = None, check: bool = True,
             scenario: dict | None = None) -> SimResult:
    """Replay `pool` with Trainers `specs` (submit_s relative to the window start).

    allocator: a registered allocator name or a function (AllocState, AllocOptions) -> AllocResult.
    scaling_delay_s: every change of a Trainer's node count to k > 0 nodes (starts included)
    also costs scaling_delay_s seconds of O(k) (a rescale cost).
    check: verify every decision's node map (nodes only from the pool, never two Trainers on
    one node, counts 0 or within Nmin..Nmax); a violation raises RuntimeError.
    """
    from planner import metrics

    wall0 = time.perf_counter()
    if cadence not in CADENCES:
        raise ValueError(f"unknown cadence {cadence!r}; choose one of {', '.join(CADENCES)}")
    if pj_max < 1:
        raise ValueError("pj_max must be >= 1")
    opts = opts or AllocOptions()
    if opts.pj_max is None:
        opts = opts.with_(pj_max=pj_max)
    alloc_name, alloc_fn = _resolve_allocator(allocator)

    T = float(pool.end_s - pool.start_s)
    ptimes = np.asarray(pool.times, dtype=float) - pool.start_s
    npool = len(ptimes)
    nodes_total = int(pool.nodes)
    idle = np.zeros(nodes_total, dtype=bool)
    idle[np.asarray(pool.initial_idle, dtype=np.int64)] = True
    owner = np.full(nodes_total, -1, dtype=np.int64)
    n_idle = int(idle.sum())

    specs = sorted(specs, key=lambda s: s.submit_s)
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        raise ValueError("Trainer ids must be unique")
    inwin = [s for s in specs if s.submit_s < T]
    runs = [_Run(s, i) for i, s in enumerate(inwin)]
    nspec = len(runs)
    ai = 0  # next arrival
    pi = 0  # next pool event
    queue: deque[_Run] = deque()
    active: list[_Run] = []
    step_s = float(step_min) * 60.0
    next_tick = 0.0 if cadence == "interval" else math.inf

    # records
    tl_t, tl_pool, tl_alloc, tl_rate, tl_running, tl_waiting = [], [], [], [], [], []
    dec_rows: list[tuple] = []
    pre_rows: list[tuple] = []
    counters = dict(events=0, pool_events=0, arrivals=0, completions=0, quick_starts=0)
    gross_total = 0.0
    alloc_node_s = 0.0
    last_dec_row: int | None = None  # index of the decision whose map holds until the next event
    last_progress = -1.0

    now = 0.0

    def allocated_nodes() -> int:
        return sum(len(r.nodes) for r in active)

    def total_rate() -> float:
        return sum(r.prod for r in active)

    def record():
        tl_t.append(now)
        tl_pool.append(n_idle)
        tl_alloc.append(allocated_nodes())
        tl_rate.append(total_rate())
        tl_running.append(sum(1 for r in active if r.nodes))
        tl_waiting.append(len(queue) + sum(1 for r in active if not r.nodes))

    def release(r: _Run):
        if r.nodes:
            owner[np.fromiter(r.nodes, dtype=np.int64, count=len(r.nodes))] = -1
        r.set_nodes(set(), now)

    def decide():
        nonlocal last_dec_row
        pool_ids = tuple(np.flatnonzero(idle).tolist())
        tstates = []
        for r in active:
            s = r.spec
            rem = max(r.remaining(), 0.0)
            eta = r.seen_eta_node_h(rem)
            tstates.append(TrainerState(
                id=s.id, nmin=s.nmin, nmax=s.nmax, curve=s.curve, current=r.current,
                rup_s=s.rup_s, rdw_s=s.rdw_s, remaining_samples=rem, priority=s.priority,
                submit_s=s.submit_s, model=s.model, eta_node_h=eta,
                running_s=(now - r.start_s) if not math.isnan(r.start_s) else 0.0))
        state = AllocState(pool=pool_ids, trainers=tuple(tstates), now_s=now)
        t0 = time.perf_counter()
        res: AllocResult = alloc_fn(state, opts)
        wall = time.perf_counter() - t0
        node_map = res.node_map
        if check:
            _check_map(state, node_map, idle)
        rate_before = total_rate()
        changed = 0
        cost = 0.0
        idle_cost = 0.0
        moved: list[_Run] = []
        for r in active:
            new = node_map.get(r.spec.id, ())
            c, k = len(r.nodes), len(new)
            newset = set(new)
            if c == k and r.nodes == newset:
                continue
            changed += 1
            o_old = r.rate
            if k != c:
                r.rescales += 1 if c else 0  # starting from 0 nodes is a start, not a rescale
                rc = (r.spec.rup_s if k > c else r.spec.rdw_s) * o_old
                r.charge(_RESC, rc)
                cost += rc
            if r.nodes:  # release first; new owners are written after every release below
                owner[np.fromiter(r.nodes, dtype=np.int64, count=len(r.nodes))] = -1
            moved.append(r)
            r.set_nodes(newset, now)
            if scaling_delay_s > 0 and k and k != c:
                dc = scaling_delay_s * r.rate
                r.charge(_RESC, dc)
                cost += dc
            if idle_during_solve and r.rate > o_old:
                ic = (r.rate - o_old) * wall
                r.charge(_IDLE, ic)
                idle_cost += ic
        for r in moved:  # a node one Trainer gave up may go to one processed before it
            if r.nodes:
                owner[np.fromiter(r.nodes, dtype=np.int64, count=len(r.nodes))] = r.idx
        dec_rows.append((now, alloc_name, res.status, float(res.objective), float(res.build_s),
                         float(res.solve_s), wall, changed, len(active), len(pool_ids),
                         allocated_nodes(), cost, idle_cost, rate_before, total_rate(), 0.0))
        last_dec_row = len(dec_rows) - 1

    def quick_start():
        free = np.flatnonzero(idle & (owner < 0))
        pos = 0
        for r in active:
            if r.nodes:
                continue
            avail = len(free) - pos
            if avail < r.spec.nmin:
                break
            k = min(r.spec.nmax, avail)
            take = free[pos:pos + k]
            pos += k
            owner[take] = r.idx
            r.set_nodes(set(take.tolist()), now)
            if scaling_delay_s > 0:
                r.charge(_RESC, scaling_delay_s * r.rate)
            counters["quick_starts"] += 1

    first = True
    while True:
        # ---- the next event
        tp = ptimes[pi] if pi < npool else math.inf
        ta = runs[ai].spec.submit_s if ai < nspec else math.inf
        tc = math.inf
        for r in active:
            if r.nodes:
                tc = min(tc, now + r.time_to_finish())
        tn = 0.0 if first else min(tp, ta, tc, next_tick)
        if tn >= T:
            tn = T
        # ---- 1. credit the interval
        dt = tn - now
        if dt > 0:
            for r in active:
                if r.nodes:
                    gross_total += r.credit(dt)
                    alloc_node_s += len(r.nodes) * dt
        if last_dec_row is not None and not first:
            row = dec_rows[last_dec_row]
            dec_rows[last_dec_row] = row[:-1] + (tn - row[0],)
            last_dec_row = None
        now = tn
        if tn >= T and not first:
            break
        first = False
        counters["events"] += 1
        # ---- 2. completions (and kills, bug jobs hanging or leaving)
        left = False
        for r in active:
            if not r.reached(now):
                continue
            if r.hung:
                r.outcome = "hung"
            elif r.fate == "complete":
                r.done_samples = r.spec.work_samples
                r.outcome = "completed"
                counters["completions"] += 1
            elif r.fate == "kill":
                r.done_samples = r.target
                r.outcome = "killed"
            else:  # the bug job hangs now: no more progress, nodes kept until its budget is used
                r.done_samples = r.target
                r.hung = True
                r.pend = [0.0, 0.0, 0.0]
                if not r.reached(now):
                    continue
                r.outcome = "hung"
            r.end_s = now
            release(r)
            left = True
        if left:
            active = [r for r in active if math.isnan(r.end_s)]
        # ---- 3. pool change
        if pi < npool and ptimes[pi] <= now:
            counters["pool_events"] += 1
            joins = pool.joins[pi]
            leaves = pool.leaves[pi]
            if len(leaves):
                leaves = np.asarray(leaves, dtype=np.int64)
                own = owner[leaves]
                hit = own >= 0
                if hit.any():
                    by_run = {r.idx: r for r in active}
                    for ridx in np.unique(own[hit]).tolist():
                        r = by_run[ridx]
                        lost = leaves[own == ridx]
                        o_old = r.rate
                        c = len(r.nodes)
                        rest = r.nodes.difference(lost.tolist())
                        owner[lost] = -1
                        r.charge(_PRE, r.spec.rdw_s * o_old)
                        r.preemptions += 1
                        if len(rest) < r.spec.nmin:
                            if rest:
                                owner[np.fromiter(rest, dtype=np.int64, count=len(rest))] = -1
                            rest = set()
                        r.set_nodes(rest, now)
                        pre_rows.append((now, r.spec.id, c, len(lost), len(rest), r.spec.rdw_s * o_old))
                n_idle -= int(idle[leaves].sum())
                idle[leaves] = False
            if len(joins):
                joins = np.asarray(joins, dtype=np.int64)
                n_idle += int((~idle[joins]).sum())
                idle[joins] = True
            pi += 1
        # ---- 4. arrivals and admission
        while ai < nspec and runs[ai].spec.submit_s <= now:
            queue.append(runs[ai])
            ai += 1
            counters["arrivals"] += 1
        while queue and len(active) < pj_max:
            r = queue.popleft()
            r.admit_s = now
            active.append(r)
        # ---- 5. decide
        if cadence == "events":
            if active:
                decide()
        else:
            if now >= next_tick:
                while next_tick <= now:
                    next_tick += step_s
                if active:
                    decide()
            elif active:
                quick_start()
        if check:
            _check_owners(active, owner, idle)
        record()
        if progress is not None and T > 0:
            frac = now / T
            if frac - last_progress >= 0.01:
                progress(min(frac, 1.0))
                last_progress = frac
    record()
    if progress is not None:
        progress(1.0)

    timeline = pd.DataFrame({"t_s": tl_t, "pool_nodes": tl_pool, "allocated_nodes": tl_alloc,
                             "throughput_samples_per_s": tl_rate, "running": tl_running,
                             "waiting": tl_waiting})
    decisions = pd.DataFrame(dec_rows, columns=[
        "t_s", "allocator", "status", "objective", "build_s", "solve_s", "wall_s", "changed",
        "trainers", "pool_nodes", "allocated_nodes", "rescale_cost_samples", "solve_idle_cost_samples",
        "rate_before_samples_per_s", "rate_after_samples_per_s", "held_s"])
    preemptions = pd.DataFrame(pre_rows, columns=["t_s", "trainer", "nodes_before", "nodes_lost",
                                                  "nodes_after", "cost_samples"])
    trainers = pd.DataFrame({
        "id": [r.spec.id for r in runs],
        "model": [r.spec.model for r in runs],
        "submit_s": [r.spec.submit_s for r in runs],
        "admit_s": [r.admit_s for r in runs],
        "start_s": [r.start_s for r in runs],
        "end_s": [r.end_s for r in runs],
        "work_samples": [r.spec.work_samples for r in runs],
        "samples": [r.done_samples for r in runs],
        "node_s": [r.node_s for r in runs],
        "max_nodes": [r.max_nodes for r in runs],
        "nodes_at_end": [len(r.nodes) for r in runs],
        "rescales": [r.rescales for r in runs],
        "preemptions": [r.preemptions for r in runs],
        "rescale_cost_samples": [r.paid[_RESC] for r in runs],
        "preemption_cost_samples": [r.paid[_PRE] for r in runs],
        "solve_idle_cost_samples": [r.paid[_IDLE] for r in runs],
        "rescale_cost_incurred_samples": [r.incurred[_RESC] for r in runs],
        "preemption_cost_incurred_samples": [r.incurred[_PRE] for r in runs],
    })
    trainers["outcome"] = [r.outcome or ("running" if r.nodes else "admitted" if not math.isnan(r.admit_s)
                                         else "queued") for r in runs]
    trainers["completed"] = trainers["outcome"] == "completed"
    trainers["queue_s"] = trainers["start_s"] - trainers["submit_s"]
    trainers["jct_s"] = (trainers["end_s"] - trainers["submit_s"]).where(trainers["completed"])
    trainers["run_s"] = (trainers["end_s"] - trainers["start_s"]).where(trainers["completed"])
    trainers["mean_nodes"] = np.where(trainers["completed"], trainers["node_s"] / trainers["run_s"],
                                      np.nan)
    records = dict(T=T, gross_samples=gross_total, allocated_node_s=alloc_node_s,
                   pool_node_hours=pool.node_hours(), mean_pool_nodes=pool.mean_nodes(),
                   specs=inwin, not_in_window=len(specs) - len(inwin), pj_max=pj_max,
                   tfwd_s=opts.tfwd_s, counters=counters, wall_s=time.perf_counter() - wall0,
                   start_s=pool.start_s, end_s=pool.end_s, log=pool.log)
    summary = metrics.summarize(timeline, trainers, decisions, preemptions, records)
    summary["wall_s"] = time.perf_counter() - wall0
    return SimResult(summary=summary, timeline=timeline, trainers=trainers, decisions=decisions,
                     preemptions=preemptions, scenario=dict(scenario or {}))


def _check_owners(active, owner: np.ndarray, idle: np.ndarray):
    """Every held node is idle and owned by exactly the Trainer that holds it."""
    n = 0
    for r in active:
        if r.nodes:
            ids = np.fromiter(r.nodes, dtype=np.int64, count=len(r.nodes))
            if not idle[ids].all():
                raise RuntimeError(f"Trainer {r.spec.id} holds a node that is not in the pool")
            if not (owner[ids] == r.idx).all():
                raise RuntimeError(f"node ownership out of step for Trainer {r.spec.id}")
            n += len(ids)
    if int((owner >= 0).sum()) != n:
        raise RuntimeError("a node is owned by no running Trainer")


def _check_map(state: AllocState, node_map: dict, idle: np.ndarray):
    pool_n = len(state.pool)
    parts = []
    for t in state.trainers:
        got = node_map.get(t.id, ())
        k = len(got)
        if k and not (t.nmin <= k <= t.nmax):
            raise RuntimeError(f"allocator gave Trainer {t.id} {k} nodes outside {t.nmin}..{t.nmax}")
        if k > pool_n:
            raise RuntimeError(f"allocator gave Trainer {t.id} more nodes than the pool has")
        if k:
            parts.append(np.fromiter(got, dtype=np.int64, count=k))
    if len(node_map) > len(state.trainers) or set(node_map) - {t.id for t in state.trainers}:
        extra = set(node_map) - {t.id for t in state.trainers}
        raise RuntimeError(f"allocator returned unknown Trainers {sorted(extra)[:3]}")
    if not parts:
        return
    ids = np.concatenate(parts)
    bad = (ids < 0) | (ids >= len(idle))
    if not bad.any():
        bad = ~idle[ids]
    if bad.any():
        raise RuntimeError(f"allocator gave node {int(ids[np.argmax(bad)])}, which is not in the pool")
    if len(np.unique(ids)) != len(ids):
        u, c = np.unique(ids, return_counts=True)
        raise RuntimeError(f"allocator gave node {int(u[np.argmax(c > 1)])} to two Trainers")
