"""The event loop of a replay: `Replay(pool, specs, ...).run()` -> planner.replay.simulator.SimResult.

One method per phase of an event (planner.replay.simulator's docstring has the rules):
next_time -> credit -> complete -> pool_change (preempt) -> admit -> decide | quick_start,
then record. Node ownership is one array (`owner[node]` = the holding TrainerRun's idx or -1)
beside the pool's idle mask, both indexed by node id.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

from planner import allocators
from planner.allocators.base import AllocOptions, AllocResult, AllocState, trainer_state
from planner.replay import hooks as rules
from planner.replay.checks import check_map, check_owners
from planner.replay.config import ReplayConfig, ReplayHooks, split_options
from planner.replay.hooks import ConstantTfwd, LowestId
from planner.replay.pool import PoolTrace
from planner.replay.records import Counters, Decision, Preemption, Timeline
from planner.replay.result import SimResult, build_result
from planner.replay.runs import PREEMPTION, RESCALE, SOLVE_IDLE, TrainerRun
from planner.workload.trainers import TrainerSpec

CADENCES = tuple(rules.CADENCES)  # the names the scenario schema offers
ADMISSIONS = tuple(rules.ADMISSIONS)


def resolve_allocator(allocator) -> tuple[str, Callable]:
    """(name, function) of a registered allocator name or an allocator function."""
    if callable(allocator):
        return getattr(allocator, "__name__", "custom"), allocator
    return allocator, allocators.get(allocator)


def _ids(nodes: set[int]) -> np.ndarray:
    return np.fromiter(nodes, dtype=np.int64, count=len(nodes))


class _Specs(Sequence):
    """The TrainerSpecs of a queue of TrainerRuns, read on demand (the admission rules look at its
    length and head only; a list of a 1,000-Trainer queue at every event cost more than they do)."""

    __slots__ = ("runs",)

    def __init__(self, runs):
        self.runs = runs

    def __len__(self) -> int:
        return len(self.runs)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [r.spec for r in list(self.runs)[i]]
        return self.runs[i].spec


# Allocators whose answer depends only on the pool, the admitted Trainers' bounds, curves, costs,
# submit times, batch sizes and the nodes they hold (not on the clock or the work left) with the
# objectives below: at an event where none of that changed since their last answer, and that answer
# changed nothing, the replay reuses it (the same node map; Decision.reused) instead of asking again.
MEMO_ALLOCATORS = frozenset({"dp", "equal-share"})
MEMO_OBJECTIVES = frozenset({"throughput", "priority", "scaling-efficiency"})


class Replay:
    """One replay of `pool` with Trainers `specs` under an allocator (arguments as simulate()).

    `config` (ReplayConfig) holds the settings; `hooks` (ReplayHooks) the replaceable steps:
    node_mapper (default LowestId), tfwd_rule (default ConstantTfwd(opts.tfwd_s)), admission and
    cadence (default: the rules config.admission / config.cadence name), learner.
    """

    def __init__(self, pool: PoolTrace, specs: list[TrainerSpec], allocator: str | Callable = "dp",
                 opts: AllocOptions | None = None, config: ReplayConfig | None = None,
                 hooks: ReplayHooks | None = None, **options):
        config, hooks = split_options(config, hooks, options)
        # the replay's Pj_max and step are the allocator's too (one channel)
        opts = (opts or AllocOptions()).with_(pj_max=config.pj_max, step_min=config.step_min)
        self.config, self.opts = config, opts
        self.pj_max, self.check = config.pj_max, config.check
        self.idle_during_solve, self.scaling_delay_s = config.idle_during_solve, config.scaling_delay_s
        self.migrate_s = config.migrate_s  # None: no migration
        self.drop = config.drop  # IBM's drop mode: a Trainer not admitted on arrival is rejected
        self.pool_only = config.decide_on == "pool"  # only pool events are events (ReplayConfig.decide_on)
        self.admission = hooks.admission or rules.ADMISSIONS[config.admission](config)
        self.cadence = hooks.cadence or rules.CADENCES[config.cadence](config)
        self.learner = hooks.learner  # planner.workload.learning.CurveLearner: the allocator sees learned curves
        self.alloc_name, self.alloc_fn = resolve_allocator(allocator)
        self.node_mapper = hooks.node_mapper or LowestId()
        self.tfwd_rule = hooks.tfwd_rule or ConstantTfwd(opts.tfwd_s)
        self.pool = pool
        self.T = float(pool.end_s - pool.start_s)
        self.ptimes = np.asarray(pool.times, dtype=float) - pool.start_s
        self.idle = np.zeros(int(pool.nodes), dtype=bool)
        self.idle[np.asarray(pool.initial_idle, dtype=np.int64)] = True
        self.owner = np.full(int(pool.nodes), -1, dtype=np.int64)
        self.n_idle = int(self.idle.sum())
        self.pool_ids: tuple | None = None
        specs = sorted(specs, key=lambda s: s.submit_s)
        ids = [s.id for s in specs]
        if len(set(ids)) != len(ids):
            raise ValueError("Trainer ids must be unique")
        self.specs = specs
        self.in_window = [s for s in specs if s.submit_s < self.T]
        self.runs = [TrainerRun(s, i) for i, s in enumerate(self.in_window)]
        self.next_arrival = 0
        self.next_pool_event = 0
        self.queue: deque[TrainerRun] = deque()
        self.active: list[TrainerRun] = []
        self.next_tick = float(self.cadence.first_tick)
        self.now = 0.0
        self.timeline = Timeline()
        self.decisions: list[Decision] = []
        self.preemptions: list[Preemption] = []
        self.counters = Counters()
        self.gross_samples = 0.0
        self.allocated_node_s = 0.0
        self.open_decision: Decision | None = None  # the decision whose map holds until the next event
        # the allocator's inputs change only where `version` is raised (active set, nodes held, batch
        # sizes, the pool); a decision that changed nothing may be reused while it stays the same
        self.version = 0
        self.memo_ok = (isinstance(allocator, str) and allocator in MEMO_ALLOCATORS
                        and opts.objective in MEMO_OBJECTIVES and hooks.tfwd_rule is None
                        and hooks.node_mapper is None and self.learner is None)
        self.memo: tuple | None = None  # (version, AllocResult, node-map wall s, pool nodes, tfwd_s)
        self.checked_version = -1

    # ---- the loop

    def run(self, progress: Callable[[float], None] | None = None) -> SimResult:
        """Replay the whole window; returns the SimResult."""
        wall0 = time.perf_counter()
        last_progress = -1.0
        first = True
        while True:
            tn = 0.0 if first else self.next_time()
            self.credit(tn, first)
            if tn >= self.T and not first:
                break
            first = False
            self.counters.events += 1
            self.complete()
            self.pool_change()
            self.admit()
            self.decide_or_start()
            if self.check and self.checked_version != self.version:  # unchanged: it holds as before
                check_owners(self.active, self.owner, self.idle)
                self.checked_version = self.version
            self.record()
            if progress is not None and self.T > 0:
                frac = self.now / self.T
                if frac - last_progress >= 0.01:
                    progress(min(frac, 1.0))
                    last_progress = frac
        self.record()
        if progress is not None:
            progress(1.0)
        return build_result(self, wall0)

    def next_time(self) -> float:
        """The next event: pool change, arrival, completion at current rates, tick; at most T."""
        tp = self.ptimes[self.next_pool_event] if self.next_pool_event < len(self.ptimes) else math.inf
        if self.pool_only:  # decide_on "pool": arrivals and completions wait for the next pool event
            return min(tp, self.T)
        ta = self.runs[self.next_arrival].spec.submit_s if self.next_arrival < len(self.runs) else math.inf
        tc, now = math.inf, self.now
        for r in self.active:
            if r.nodes:
                t = now + r.time_to_finish()
                if t < tc:
                    tc = t
        return min(min(tp, ta, tc, self.next_tick), self.T)

    def record(self):
        self.timeline.add(self.now, self.n_idle, self.active, len(self.queue))

    # ---- 1. credit the interval

    def credit(self, tn: float, first: bool = False):
        """Every running Trainer produces samples from now to tn; the open decision's map held until tn."""
        dt = tn - self.now
        if dt > 0:
            for r in self.active:
                if r.nodes:
                    if self.pool_only:  # it produces up to its work, then holds its nodes idle
                        run = min(dt, r.time_to_finish())
                        self.gross_samples += r.credit(run)
                        r.node_s += len(r.nodes) * (dt - run)
                    else:
                        self.gross_samples += r.credit(dt)
                    self.allocated_node_s += len(r.nodes) * dt
                    if self.learner is not None:
                        self.learner.observe(r.spec, len(r.nodes), r.rate)
        if self.open_decision is not None and not first:
            self.open_decision.held_s = tn - self.open_decision.t_s
            self.open_decision = None
        self.now = tn

    # ---- 2. completions (and kills, bug jobs hanging or leaving)

    def complete(self):
        left = False
        for r in self.active:
            if r.reached(self.now) and r.leave(self.now):
                if r.outcome == "completed":
                    self.counters.completions += 1
                self.release(r)
                left = True
        if left:
            self.active = [r for r in self.active if math.isnan(r.end_s)]

    def release(self, r: TrainerRun):
        self.version += 1
        if r.nodes:
            self.owner[_ids(r.nodes)] = -1
        r.set_nodes(set(), self.now)

    # ---- 3. pool change

    def pool_change(self):
        pi = self.next_pool_event
        if not (pi < len(self.ptimes) and self.ptimes[pi] <= self.now):
            return
        self.counters.pool_events += 1
        self.version += 1
        self.pool_ids = None  # alloc_state's (tuple, set) of the idle ids, rebuilt when next asked
        joins, leaves = self.pool.joins[pi], self.pool.leaves[pi]
        if len(leaves):
            leaves = np.asarray(leaves, dtype=np.int64)
            self.preempt(leaves)
            self.n_idle -= int(np.count_nonzero(self.idle[leaves]))
            self.idle[leaves] = False
        if len(joins):
            joins = np.asarray(joins, dtype=np.int64)
            self.n_idle += len(joins) - int(np.count_nonzero(self.idle[joins]))
            self.idle[joins] = True
        self.next_pool_event += 1

    def preempt(self, leaves: np.ndarray):
        """Nodes leaving under Trainers: each such Trainer pays Rdw * O(c) and shrinks (to 0 below
        Nmin); with migration allowed (migrate_s), a Trainer whose lost nodes can all be replaced
        by free idle nodes moves onto them instead, paying migrate_s * O(c) and keeping its size."""
        own = self.owner[leaves]
        if not np.count_nonzero(own >= 0):
            return
        lost_by = {}  # owner idx -> its leaving nodes, in the order of `leaves`
        for node, ridx in zip(leaves.tolist(), own.tolist()):
            if ridx >= 0:
                lost_by.setdefault(ridx, []).append(node)
        by_run = {r.idx: r for r in self.active}
        for ridx in sorted(lost_by):
            r = by_run[ridx]
            lost = np.asarray(lost_by[ridx], dtype=np.int64)
            o_old = r.rate
            c = len(r.nodes)
            rest = r.nodes.difference(lost.tolist())
            self.owner[lost] = -1
            if self.migrate_s is not None and self.migrate(r, rest, lost, leaves, o_old):
                continue
            r.charge(PREEMPTION, r.spec.rdw_s * o_old)
            r.preemptions += 1
            if len(rest) < r.spec.nmin:
                if rest:
                    self.owner[_ids(rest)] = -1
                rest = set()
            r.set_nodes(rest, self.now)
            self.preemptions.append(Preemption(self.now, r.spec.id, c, len(lost), len(rest),
                                               r.spec.rdw_s * o_old))

    def migrate(self, r: TrainerRun, rest: set, lost: np.ndarray, leaves: np.ndarray, o_old: float) -> bool:
        """Replace every lost node of r by a free idle node (not leaving now); False when too few."""
        free = np.flatnonzero(self.idle & (self.owner < 0))
        free = free[~np.isin(free, leaves)]
        if len(free) < len(lost):
            return False
        take = np.asarray(self.node_mapper.pick_free(free, len(lost), self.now), dtype=np.int64)
        self.owner[take] = r.idx
        cost = self.migrate_s * o_old
        r.charge(PREEMPTION, cost)
        r.preemptions += 1
        r.set_nodes(rest | set(take.tolist()), self.now)
        self.preemptions.append(Preemption(self.now, r.spec.id, len(r.nodes), len(lost), len(r.nodes), cost,
                                           nodes_migrated=len(lost)))
        return True

    # ---- 4. arrivals and admission

    def admit(self):
        while self.next_arrival < len(self.runs) and self.runs[self.next_arrival].spec.submit_s <= self.now:
            self.queue.append(self.runs[self.next_arrival])
            self.next_arrival += 1
            self.counters.arrivals += 1
        k = self.admission.admit(_Specs(self.queue), _Specs(self.active), self.n_idle,
                                 self.pj_max) if self.queue else 0
        if k:
            self.version += 1
        if isinstance(k, int):
            for _ in range(k):
                r = self.queue.popleft()
                r.admit_s = self.now
                self.active.append(r)
        else:  # positions in the queue (a rule under which a Trainer may pass those before it)
            picked = sorted(set(k))
            runs = [self.queue[i] for i in picked]
            for i in reversed(picked):
                del self.queue[i]
            for r in runs:
                r.admit_s = self.now
                self.active.append(r)
        while self.drop and self.queue:  # drop mode: what was not admitted on arrival is rejected
            r = self.queue.popleft()
            r.outcome = "dropped"
            self.counters.dropped += 1

    # ---- 5. decide (or, between interval ticks, quick start)

    def decide_or_start(self):
        """A decision when the cadence says so; otherwise Trainers without nodes start at once."""
        if self.cadence.decides(self.now, self.next_tick):
            self.next_tick = self.cadence.next_tick(self.next_tick, self.now)
            if self.active:
                self.decide()
        elif self.active:
            self.quick_start()

    def alloc_state(self) -> AllocState:
        """What the allocator sees. The pool's tuple and set are kept until the pool changes; every
        node a Trainer holds is in the pool here (pool_change took the leaving ones away), so its
        held nodes are its sorted node ids (AllocState.known)."""
        now = self.now
        tstates = []
        held = {}
        for r in self.active:
            rem = max(r.remaining(), 0.0)
            f = r.state_fields.copy()  # id, bounds, costs, priority, submit time, model, batches
            f["curve"] = self.shown_curve(r)
            f["current"] = r.current
            f["remaining_samples"] = rem
            f["eta_node_h"] = r.seen_eta_node_h(rem)
            f["running_s"] = (now - r.start_s) if not math.isnan(r.start_s) else 0.0
            f["batch_size"] = r.batch
            tstates.append(trainer_state(f))
            held[f["id"]] = list(r.current)
        if self.pool_ids is None:
            ids = np.flatnonzero(self.idle).tolist()
            self.pool_ids = (tuple(ids), frozenset(ids))
        return AllocState.known(self.pool_ids[0], tuple(tstates), now, self.pool_ids[1], held, ascending=True)

    def shown_curve(self, r: TrainerRun):
        """The curve the allocator sees: the true one, or the learned belief (learn_curves)."""
        if self.learner is None or r.spec.batches:
            return r.curve
        return self.learner.believed(r.spec, r.curve)

    def decide(self):
        """Ask the allocator; apply its map (node_mapper) with rescale costs; record a Decision."""
        if self.memo is not None and self.memo[0] == self.version:
            self.reuse_decision()
            return
        state = self.alloc_state()
        tfwd_s = float(self.tfwd_rule(state))
        opts = self.opts if tfwd_s == self.opts.tfwd_s else self.opts.with_(tfwd_s=tfwd_s)
        t0 = time.perf_counter()
        res: AllocResult = self.alloc_fn(state, opts)
        wall = time.perf_counter() - t0
        node_map = self.node_mapper.decision_map(state, res)
        if self.check:
            check_map(state, node_map, self.idle)
        rate_before = self.total_rate()
        changed, cost, idle_cost = self.apply_map(node_map, wall, res.batch_sizes)
        self.open_decision = Decision(
            t_s=self.now, allocator=res.allocator or self.alloc_name, status=res.status,
            objective=float(res.objective), build_s=float(res.build_s), solve_s=float(res.solve_s),
            wall_s=wall, changed=changed, trainers=len(self.active), pool_nodes=len(state.pool),
            allocated_nodes=self.allocated_nodes(), rescale_cost_samples=cost,
            solve_idle_cost_samples=idle_cost, rate_before_samples_per_s=rate_before,
            rate_after_samples_per_s=self.total_rate(), tfwd_s=tfwd_s)
        self.decisions.append(self.open_decision)
        if changed:
            self.version += 1
            self.memo = None
        elif self.memo_ok and not cost and not idle_cost:
            self.memo = (self.version, res, wall, len(state.pool), tfwd_s)

    def reuse_decision(self):
        """The previous decision again: nothing it depends on changed since, and it changed nothing,
        so the allocator would answer the same and applying its map would change nothing."""
        _, res, wall, pool_nodes, tfwd_s = self.memo
        rate = self.total_rate()
        self.open_decision = Decision(
            t_s=self.now, allocator=res.allocator or self.alloc_name, status=res.status,
            objective=float(res.objective), build_s=float(res.build_s), solve_s=float(res.solve_s),
            wall_s=wall, changed=0, trainers=len(self.active), pool_nodes=pool_nodes,
            allocated_nodes=self.allocated_nodes(), rescale_cost_samples=0.0,
            solve_idle_cost_samples=0.0, rate_before_samples_per_s=rate,
            rate_after_samples_per_s=rate, tfwd_s=tfwd_s, reused=True)
        self.decisions.append(self.open_decision)

    def apply_map(self, node_map: dict, wall: float, batch_sizes: dict | None = None) -> tuple[int, float, float]:
        """Move Trainers to their new node sets (and batch sizes), charging rescale (and
        solve-idle) costs. Returns (Trainers changed, rescale cost, solve-idle cost) in samples."""
        changed, cost, idle_cost = 0, 0.0, 0.0
        moved: list[TrainerRun] = []
        for r in self.active:
            new = node_map.get(r.spec.id, ())
            c, k = len(r.nodes), len(new)
            b = batch_sizes.get(r.spec.id) if batch_sizes else None
            o_old = r.rate  # costs are charged on the rate before the change (batch size included)
            rebatched = b is not None and k > 0 and r.set_batch(b)
            # a restart on the same nodes with another batch size: Rdw, as the allocator counted
            if rebatched and c == k:
                rc = r.spec.rdw_s * o_old
                r.charge(RESCALE, rc)
                cost += rc
            # the same nodes (the map's tuples are sorted as `current` is; any other order: as sets)
            if c == k and (new == r.current or r.nodes == set(new)):
                changed += int(rebatched)
                continue
            newset = set(new)
            changed += 1
            if k != c:
                r.rescales += 1 if c else 0  # starting from 0 nodes is a start, not a rescale
                rc = (r.spec.rup_s if k > c else r.spec.rdw_s) * o_old
                r.charge(RESCALE, rc)
                cost += rc
            if r.nodes:  # release first; new owners are written after every release below
                self.owner[_ids(r.nodes)] = -1
            moved.append(r)
            r.set_nodes(newset, self.now)
            # the scaling delay: a start (c = 0) or a scale-up trains on its c nodes for scaling_delay_s
            # before the k, so it loses that long of O(k) - O(c); a scale-down costs nothing
            if self.scaling_delay_s > 0 and k > c:
                dc = self.scaling_delay_s * max(r.rate - o_old, 0.0)
                r.charge(RESCALE, dc)
                cost += dc
            if self.idle_during_solve and r.rate > o_old:
                ic = (r.rate - o_old) * wall
                r.charge(SOLVE_IDLE, ic)
                idle_cost += ic
        for r in moved:  # a node one Trainer gave up may go to one processed before it
            if r.nodes:
                self.owner[_ids(r.nodes)] = r.idx
        return changed, cost, idle_cost

    def quick_start(self):
        """Between ticks: admitted Trainers without nodes start FCFS on free nodes (Nmin..Nmax each)."""
        free = np.flatnonzero(self.idle & (self.owner < 0))
        for r in self.active:
            if r.nodes:
                continue
            if len(free) < r.spec.nmin:
                break
            k = min(r.spec.nmax, len(free))
            take = np.asarray(self.node_mapper.pick_free(free, k, self.now), dtype=np.int64)
            rest = ~np.isin(free, take)
            if self.check and (len(take) != k or len(free) - int(rest.sum()) != k):
                raise RuntimeError(f"node mapper gave Trainer {r.spec.id} nodes other than {k} free ones")
            free = free[rest]
            self.owner[take] = r.idx
            r.set_nodes(set(take.tolist()), self.now)
            self.version += 1
            if self.scaling_delay_s > 0:  # a start: scaling_delay_s of O(k), as in apply_map
                r.charge(RESCALE, self.scaling_delay_s * r.rate)
            self.counters.quick_starts += 1

    # ---- totals

    def allocated_nodes(self) -> int:
        return sum(len(r.nodes) for r in self.active)

    def total_rate(self) -> float:
        return sum(r.prod for r in self.active)
