"""The one allocator interface: a state in, an AllocResult out.

Every allocator module defines `allocate(state: AllocState, opts: AllocOptions) -> AllocResult`
(or another function its record names); one AllocatorInfo line in planner.allocators.ALLOCATORS
gives it its CLI name.

Counts are what the objective depends on; `node_map` turns them into node ids without
migration (planner.allocators.base.counts_to_map): a shrinking Trainer keeps the lowest
`n` of its nodes, a growing one keeps all of its nodes and takes the lowest free ones.
"""

from __future__ import annotations

import math
import os
import resource
import time
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from itertools import filterfalse, islice

import numpy as np

from planner.errors import InputError
from planner.scenario.defaults import DEFAULT_RDW_S, DEFAULT_RUP_S, DEFAULT_TFWD_S
from planner.workload.trainers import Curve

# optimal: proven optimal (exact solvers); optimal-within-gap: proven within opts.mip_gap;
# time-limit-feasible: the solver's best map when the time limit hit; fallback: the solver found
# nothing usable, every Trainer keeps what it holds; heuristic: a rule-based allocator finished.
STATUSES = ("optimal", "optimal-within-gap", "time-limit-feasible", "fallback", "heuristic")
OBJECTIVES = ("throughput", "scaling-efficiency", "priority", "progress")
SPEED_RULES = ("curve", "modelarts")  # horizon-milp's progress model (AllocOptions.speed_rule)


@dataclass(frozen=True)
class TrainerState:
    """A Trainer as the allocator sees it at a decision."""

    id: str
    nmin: int
    nmax: int
    curve: Curve
    current: tuple[int, ...] = ()  # node ids it holds now (after any preemption)
    rup_s: float = DEFAULT_RUP_S
    rdw_s: float = DEFAULT_RDW_S
    remaining_samples: float = math.inf
    priority: float = 1.0
    submit_s: float = 0.0
    model: str = ""
    eta_node_h: float | None = None  # remaining demand in node-hours (ModelArts)
    running_s: float = 0.0  # time since it first got nodes (ModelArts' greedy rules)
    request_nodes: int | None = None  # the size a rigid job asks for (the `static` baseline); None: Nmax
    # IBM's second knob: the total batch sizes it may run with, each with its own curve
    # ((batch_size, Curve), ...); empty: one batch size, `curve`. `curve` is the curve of the
    # batch size it runs now (`batch_size`), on which rescale costs are charged.
    batches: tuple = ()
    batch_size: int | None = None


_NEW, _SETATTR = object.__new__, object.__setattr__


def trainer_state(fields: dict) -> TrainerState:
    """TrainerState(**fields) without the frozen dataclass's __init__ (one object.__setattr__ per
    field: a third of building a decision's state in a replay, which builds ~15,000 a day of
    Summit). `fields` becomes the instance's own attributes (the caller hands it over); a field
    it lacks reads its default, as with __init__. Like __init__, nothing is validated."""
    t = _NEW(TrainerState)
    _SETATTR(t, "__dict__", fields)
    return t


@dataclass(frozen=True)
class AllocState:
    """The pool (idle node ids Trainers may use, including those they hold) and the Trainers."""

    pool: tuple[int, ...]
    trainers: tuple[TrainerState, ...]
    now_s: float = 0.0

    @cached_property
    def pool_set(self) -> frozenset[int]:
        """The pool as a set, built once per decision (several steps look nodes up in it)."""
        return frozenset(self.pool)

    @classmethod
    def known(cls, pool: tuple[int, ...], trainers: tuple[TrainerState, ...], now_s: float,
              pool_set: frozenset[int], held_nodes: dict[str, list[int]], ascending: bool = False) -> "AllocState":
        """An AllocState whose pool_set and held_nodes the caller has already (the replay: its pool
        changes only at pool events, and every node a Trainer holds is in the pool, so held_nodes
        is each Trainer's sorted nodes), given instead of computed at each decision; `ascending`:
        the pool's ids are distinct and ascending, so the pool is its own sorted_pool."""
        state = cls(pool=pool, trainers=trainers, now_s=now_s)
        state.__dict__["pool_set"] = pool_set  # what the cached properties below would store
        state.__dict__["held_nodes"] = held_nodes
        if ascending:  # the caller knows the pool's ids are distinct and ascending (the replay's)
            state.__dict__["sorted_pool"] = pool
        return state

    @cached_property
    def sorted_pool(self) -> tuple[int, ...]:
        """The pool's distinct ids, ascending (counts_to_map takes the lowest free ones from it)."""
        return tuple(sorted(self.pool_set))

    @cached_property
    def held_nodes(self) -> dict[str, list[int]]:
        """Per Trainer id, the nodes it holds that are still in the pool, ascending (C_j is the
        length); built once per decision for the level tables and the node map."""
        pool = self.pool_set
        return {t.id: sorted(pool.intersection(t.current)) if t.current else [] for t in self.trainers}


@dataclass(frozen=True)
class AllocOptions:
    tfwd_s: float = DEFAULT_TFWD_S
    objective: str = "throughput"
    time_limit_s: float = 10.0
    mip_gap: float = 1e-6
    pow2: bool = False  # node counts restricted to 0 and powers of two
    pj_max: int | None = None  # at most this many Trainers get nodes (FCFS by submit time)
    # horizon-milp (ModelArts): look-ahead steps, step length, progress rule
    horizon_steps: int = 5
    step_min: float = 5.0
    speed_rule: str = "curve"  # "curve" or "modelarts" (k * 0.8**log2(k))
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def with_(self, **kw) -> "AllocOptions":
        return replace(self, **kw)


@dataclass
class AllocResult:
    allocator: str
    counts: dict[str, int]
    node_map: dict[str, tuple[int, ...]]
    objective: float
    status: str
    build_s: float = 0.0
    solve_s: float = 0.0
    message: str = ""
    batch_sizes: dict[str, int] = field(default_factory=dict)  # chosen per Trainer with batch choices
    # allocator-specific figures beside the common ones (horizon-milp: its plan's own objective)
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        out = {
            "allocator": self.allocator,
            "status": self.status,
            "objective": self.objective,
            "counts": dict(self.counts),
            "build_s": self.build_s,
            "solve_s": self.solve_s,
        }
        if self.batch_sizes:
            out["batch_sizes"] = dict(self.batch_sizes)
        if self.details:
            out["details"] = dict(self.details)
        return out


# ---------------------------------------------------------------------------
# shared pieces every allocator uses


def throughput_weight(t: TrainerState, objective: str, tfwd_s: float) -> float:
    """Factor on O_j(n) that turns samples/s into the objective's unit."""
    if objective == "throughput":
        return 1.0
    if objective == "priority":
        return float(t.priority)
    if objective == "scaling-efficiency":
        one = t.curve.one_node
        try:
            w = 1.0 / one if one > 0 else 0.0
        except OverflowError:
            w = 0.0
        return w if math.isfinite(w) and w * max(t.curve.samples_per_s) < 1e300 else 0.0
    if objective == "progress":
        # fraction of remaining work done per second (capped at completion, see _levels_values)
        rem = t.remaining_samples
        return 1.0 / rem if rem and math.isfinite(rem) and rem > 0 else 0.0
    raise ValueError(f"unknown objective {objective!r}; choose one of {', '.join(OBJECTIVES)}")


def held(t: TrainerState, pool: frozenset | set | None = None) -> int:
    """C_j: how many of the nodes Trainer t holds are still in the pool (all of them if pool is None)."""
    if pool is None:
        return len(t.current)
    if not isinstance(pool, (set, frozenset)):
        pool = frozenset(pool)
    return len(pool.intersection(t.current))


def fcfs_eligible(state: AllocState, pj_max: int | None) -> tuple[list[TrainerState], list[TrainerState]]:
    """Split Trainers into those allowed nodes (first pj_max by submit time, those still holding
    pool nodes first) and the rest."""
    ts = list(state.trainers)
    if pj_max is None or len(ts) <= pj_max:
        return ts, []
    pool = state.pool_set
    running = [held(t, pool) > 0 for t in ts]  # holds nodes still in the pool
    order = sorted(range(len(ts)), key=lambda i: (0 if running[i] else 1, ts[i].submit_s, i))
    keep = set(order[:pj_max])
    return [t for i, t in enumerate(ts) if i in keep], [t for i, t in enumerate(ts) if i not in keep]


def counts_to_map(state: AllocState, counts: dict[str, int]) -> dict[str, tuple[int, ...]]:
    """Node map without migration for feasible counts.

    Shrinking Trainers keep their lowest node ids; growing Trainers keep theirs and take the
    lowest free ids. Nodes a Trainer holds that are no longer in the pool are dropped first.
    """
    held_nodes = state.held_nodes
    taken: dict[str, list[int]] = {}
    need = 0
    for t in state.trainers:
        n = counts.get(t.id, 0)
        keep = held_nodes[t.id][:n] if n > 0 else []
        taken[t.id] = keep
        need += max(n - len(keep), 0)
    free = []
    if need:  # the lowest `need` free ids: the first `need` of the ascending pool not kept (the scan
        # stops there; a decision adds a few nodes to a pool of hundreds)
        used = set().union(*taken.values())
        free = list(islice(filterfalse(used.__contains__, state.sorted_pool), need))
    pos = 0
    out = {}
    for t in state.trainers:
        keep = taken[t.id]
        want = counts.get(t.id, 0) - len(keep)
        if want > 0:
            if pos + want > len(free):
                raise ValueError("counts exceed the pool")
            add = free[pos:pos + want]
            pos += want
            # both runs are sorted: merge only when they interleave
            keep = keep + add if not keep or keep[-1] < add[0] else sorted(keep + add)
        out[t.id] = tuple(keep)
    return out


def objective_of(state: AllocState, counts: dict[str, int], opts: AllocOptions) -> float:
    """The BFTrainer objective of a count vector (the same number every allocator reports).

    C_j is the number of nodes Trainer j holds that are still in the pool.
    """
    held_nodes = state.held_nodes  # C_j = len(held_nodes[t.id]): held(t, pool), built once per state
    total = 0.0
    for t in state.trainers:
        total += level_value(t, counts.get(t.id, 0), opts, len(held_nodes[t.id]))
    return total


def level_value(t: TrainerState, k: int, opts: AllocOptions, current: int | None = None) -> float:
    """_levels_values for one level, in plain floats (the same arithmetic, so the same number)."""
    if t.batches:
        c = len(t.current) if current is None else int(current)
        lv, v, _ = batch_levels(t, opts, max(int(k), c, 1), c)
        return float(v[int(np.searchsorted(lv, int(k)))]) if int(k) in lv else -math.inf
    w = throughput_weight(t, opts.objective, opts.tfwd_s)
    c = len(t.current) if current is None else int(current)
    k = int(k)
    o = t.curve.table_list(max(k, c))  # the table's floats, as a list
    gain = opts.tfwd_s * o[k] * w
    if opts.objective == "progress":
        gain = min(gain, 1.0)
    o_now = o[c] * w
    cost = o_now * t.rup_s if k > c else o_now * t.rdw_s if k < c else 0.0
    return gain - cost


def floor_level(k: int, t: TrainerState, pow2: bool = False) -> int:
    """The largest node count Trainer t may run on that is <= k: k clipped to Nmax (with pow2
    rounded down to a power of two), or 0 when that is below Nmin."""
    k = min(k, t.nmax)
    if pow2 and k > 0:
        k = 1 << (k.bit_length() - 1)
    return k if k >= max(t.nmin, 1) else 0


def smallest_level(t: TrainerState, pow2: bool = False) -> int | None:
    """The smallest positive node count Trainer t may run on (Nmin, or with pow2 the smallest
    power of two >= Nmin); None when there is none within Nmax."""
    lo = max(t.nmin, 1)
    if pow2:
        lo = 1 << (lo - 1).bit_length()
    return lo if lo <= t.nmax else None


def give_leftover(counts: dict[str, int], order, free: int, pow2: bool = False) -> int:
    """Hand `free` nodes out in `order` (Trainers): each is raised as far as its Nmax and the
    nodes left allow (started at Nmin if it has 0). Updates counts; returns the nodes left."""
    for t in order:
        if free <= 0:
            break
        k = counts[t.id]
        new = floor_level(k + free, t, pow2)
        if new > k:
            counts[t.id] = new
            free -= new - k
    return free


def run_heuristic(name: str, counts_fn, state: AllocState, opts: AllocOptions) -> AllocResult:
    """allocate() of a rule-based allocator: counts_fn(state, opts), timed, status heuristic."""
    t0 = time.perf_counter()
    counts = counts_fn(state, opts)
    return make_result(name, state, counts, opts, "heuristic", build_s=0.0, solve_s=time.perf_counter() - t0)


def keep_current(state: AllocState, pow2: bool = False) -> dict[str, int]:
    """The fallback: every Trainer keeps what it still holds (clipped to its bounds; with pow2
    rounded down to a power of two; a Trainer left below Nmin stops)."""
    pool = state.pool_set
    return {t.id: floor_level(held(t, pool), t, pow2) for t in state.trainers}


def fallback_counts(state: AllocState, opts: AllocOptions) -> dict[str, int]:
    """The MILPs' fallback: keep_current, except that Trainers over Pj_max get nothing."""
    counts = keep_current(state, opts.pow2)
    _, out = fcfs_eligible(state, opts.pj_max)
    for t in out:
        counts[t.id] = 0
    return counts


# ---------------------------------------------------------------------------
# memory: every allocator that builds a table estimates its bytes first and refuses in one line
# (MemoryBudget) rather than asking the OS for tens of GiB; `auto` then picks one that fits.


class MemoryBudget(InputError):
    """The table an allocator would build does not fit the memory budget of one allocation."""


def memory_budget_bytes() -> int:
    """Bytes one allocation's tables may take: $PLANNER_ALLOC_MEM_MB (default 4096 MiB), and at
    most 60 % of the process's address-space limit when it has one (the app's workers do);
    check_memory lets tables up to CHECK_FROM_BYTES (1 MiB) pass whatever this says."""
    budget = int(float(os.environ.get("PLANNER_ALLOC_MEM_MB", "4096")) * 2**20)
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft not in (resource.RLIM_INFINITY, -1) and soft > 0:
        budget = min(budget, int(0.6 * soft))
    return budget


CHECK_FROM_BYTES = 1 << 20  # smaller tables are not checked: a budget under 1 MiB is taken as 1 MiB


def check_memory(allocator: str, what: str, need_bytes: float) -> None:
    """MemoryBudget (one line, field 'allocator') when need_bytes is over the budget. Needs up to
    CHECK_FROM_BYTES pass without reading the budget (a replay checks ~3,000 small tables; reading
    the environment and the process's limit each time was ~1 % of a replay)."""
    if need_bytes <= CHECK_FROM_BYTES:
        return
    budget = memory_budget_bytes()
    if need_bytes > budget:
        raise MemoryBudget(f"{allocator} would need {need_bytes / 2**30:,.1f} GiB for {what} (budget "
                           f"{budget / 2**30:,.1f} GiB, $PLANNER_ALLOC_MEM_MB); use auto or hull, whose memory "
                           "grows with Trainers x ~20 levels, not with the pool", field="allocator")


def count_levels(state: AllocState, opts: AllocOptions) -> int:
    """How many (Trainer, node count) levels level_tables would list (without building them)."""
    cap = len(state.pool)
    elig, _ = fcfs_eligible(state, opts.pj_max)
    total = 0
    for t in elig:
        top = min(int(t.nmax), cap)
        if top < t.nmin:
            total += 1
        elif opts.pow2:
            total += 2 + max(0, int(math.log2(max(top, 1))))
        else:
            total += top - int(t.nmin) + 2
    return total


LEVEL_BYTES = 64  # per level in level_tables: the int64/float64 arrays and the temporaries of their values


def level_tables(state: AllocState, opts: AllocOptions):
    """The count-level problem (a multiple-choice knapsack) of a decision.

    Returns (capacity, items) where capacity = |pool| and items is a list, one per Trainer that
    may get nodes (base.fcfs_eligible with opts.pj_max), of (trainer, levels, values): the
    allowed node counts (int array, ascending, starting with 0) and the objective at each.
    Trainers not in the list get 0 nodes.
    """
    cap = len(state.pool_set)
    if LEVEL_BYTES * len(state.trainers) * (cap + 2) > CHECK_FROM_BYTES:  # else surely small: not counted
        levels = count_levels(state, opts)
        check_memory("this allocator", f"{levels:,} count levels (Trainers x node counts)", LEVEL_BYTES * levels)
    held_nodes = state.held_nodes
    elig, _ = fcfs_eligible(state, opts.pj_max)
    items = []
    objective, pow2, tfwd_s = opts.objective, bool(opts.pow2), float(opts.tfwd_s)
    progress = objective == "progress"
    for t in elig:
        if t.batches:
            lv, v, _ = batch_levels(t, opts, cap, len(held_nodes[t.id]))
            items.append((t, lv, v))
            continue
        w = 1.0 if objective == "throughput" else throughput_weight(t, objective, opts.tfwd_s)
        # only min(Nmax, |N|) matters: decisions on pools of any size >= Nmax share one entry
        top = min(cap, t.nmax)
        # _levels_values' choice of cache, without its call
        table = _levels_values_large if top > SMALL_TABLE_LEVELS and not pow2 else _levels_values_small
        lv, v = table(t.curve, t.nmin, t.nmax, top, pow2, len(held_nodes[t.id]), float(t.rup_s), float(t.rdw_s), w,
                      tfwd_s, progress)
        items.append((t, lv, v))
    return cap, items


SMALL_TABLE_LEVELS = 1024  # level tables up to this many levels share the large cache below


def _levels_values(curve, nmin, nmax, cap, pow2, c, rup_s, rdw_s, w, tfwd_s, progress):
    """_compute_levels_values, cached: 8,192 tables of up to SMALL_TABLE_LEVELS levels (~134 MB
    at most), 64 larger ones (Nmax in the thousands: a table per held count would otherwise pile
    up gigabytes over a long replay)."""
    big = min(nmax, cap) > SMALL_TABLE_LEVELS and not pow2
    return (_levels_values_large if big else _levels_values_small)(curve, nmin, nmax, cap, pow2, c, rup_s, rdw_s,
                                                                    w, tfwd_s, progress)


def _compute_levels_values(curve, nmin, nmax, cap, pow2, c, rup_s, rdw_s, w, tfwd_s, progress):
    """Allowed levels and BFTrainer's per-Trainer objective at each level k:

        w_j * (T_fwd * O_j(k) - O_j(C_j) * (Rup_j [k > C_j] + Rdw_j [k < C_j]))

    with C_j = c, the nodes it holds now still in the pool, and w_j the objective's weight
    (throughput_weight). For `progress` the gain T_fwd*O_j(k)/remaining is capped at 1 (the
    Trainer cannot do more than finish). Levels: 0, or Nmin..min(Nmax, pool); pow2 keeps powers
    of two. Read-only arrays, cached: identical Trainers and repeated decisions share them."""
    hi = min(nmax, cap)
    lo = max(nmin, 1)
    if pow2:
        lv = np.asarray([0] + [k for k in range(lo, hi + 1) if (k & (k - 1)) == 0], dtype=np.int64)
    elif lo <= hi:
        lv = np.concatenate(([0], np.arange(lo, hi + 1, dtype=np.int64)))
    else:
        lv = np.zeros(1, dtype=np.int64)
    o = curve.table(max(int(lv[-1]), c))
    gain = tfwd_s * o[lv] * w
    if progress:
        gain = np.minimum(gain, 1.0)
    o_now = o[c] * w
    cost = np.zeros(len(lv))
    cost[lv > c] = o_now * rup_s
    cost[lv < c] = o_now * rdw_s
    v = gain - cost
    lv.setflags(write=False)
    v.setflags(write=False)
    return lv, v


_levels_values_small = lru_cache(maxsize=8192)(_compute_levels_values)
_levels_values_large = lru_cache(maxsize=64)(_compute_levels_values)


def batch_levels(t: TrainerState, opts: AllocOptions, cap: int, c: int):
    """Levels, values and the batch size chosen at each level for a Trainer with batch choices.

    IBM's joint choice: the value of level k is the best over the allowed batch sizes b of
    w_b * T_fwd * O_b(k) minus the rescale cost, which is charged on the current rate O(C) as
    for every Trainer (Rup if k > C, Rdw if k < C); keeping C nodes but changing the batch size
    is a restart on the same nodes and costs Rdw. Since nodes are the only shared resource, the
    best batch size per level makes the count problem the same multiple-choice knapsack (one item
    per (count, batch size), the dominated ones dropped), so dp and milp stay exact. Ties: the
    current batch size, then the smallest. The objective's weight is the Trainer's, one for all
    batch sizes: for scaling-efficiency 1 / (the best one-node rate over its batch sizes), IBM's
    throughput scaling factor against the job's baseline T(b_max per GPU, 1).

    The tables depend on the Trainer only through its curves, bounds, costs, current batch size
    and weight, so they are cached on exactly those (with min(cap, Nmax) and C): the level
    tables, the objective and the batch choice of one decision share one computation, and
    identical jobs across decisions share it too (read-only arrays).
    """
    progress = opts.objective == "progress"
    cap = min(cap, t.nmax)  # all that matters of the pool size (shares cache entries across pools)
    if opts.objective == "scaling-efficiency":
        w_cur = throughput_weight(replace(t, curve=_best_one_node_curve(t.batches, t.curve)), opts.objective,
                                  opts.tfwd_s)
    else:  # the other weights do not read the curve
        w_cur = throughput_weight(t, opts.objective, opts.tfwd_s)
    cur_b = t.batch_size if t.batch_size is not None else (t.batches[0][0] if t.batches else 0)
    big = cap > SMALL_BATCH_LEVELS and not opts.pow2
    return (_batch_levels_large if big else _batch_levels_small)(
        t.curve, t.batches, int(t.nmin), int(t.nmax), int(cap), bool(opts.pow2), int(c), float(t.rup_s),
        float(t.rdw_s), w_cur, float(opts.tfwd_s), progress, int(cur_b))


SMALL_BATCH_LEVELS = 64  # batch tables up to this many levels share the large cache (~13 MB at most)


@lru_cache(maxsize=1024)
def _best_one_node_curve(batches, curve):
    """The curve with the best one-node rate among a Trainer's batch sizes (its own if none)."""
    return max((c for _, c in batches), key=lambda c: c.one_node, default=curve)


def _compute_batch_levels(curve, batches, nmin, nmax, cap, pow2, c, rup_s, rdw_s, w_cur, tfwd_s, progress, cur_b):
    """batch_levels' tables (see there); every argument is part of the cache key."""
    lv, v_cur = _levels_values(curve, nmin, nmax, cap, pow2, c, rup_s, rdw_s, w_cur, tfwd_s, progress)
    _, g_cur = _levels_values(curve, nmin, nmax, cap, pow2, c, 0.0, 0.0, w_cur, tfwd_s, progress)
    cost = g_cur - v_cur
    switch = np.where(lv == c, float(curve.table(max(c, 1))[c]) * w_cur * rdw_s, 0.0)
    best = np.array(v_cur, dtype=float)
    choice = np.full(len(lv), int(cur_b), dtype=np.int64)
    for b, bcurve in sorted(batches, key=lambda x: x[0]):
        if b == cur_b:
            continue
        _, g = _levels_values(bcurve, nmin, nmax, cap, pow2, c, 0.0, 0.0, w_cur, tfwd_s, progress)
        v = g - cost - switch
        better = v > best
        if lv[0] == 0:
            better[0] = False  # no nodes: no batch size to speak of
        best = np.where(better, v, best)
        choice = np.where(better, b, choice)
    best.setflags(write=False)
    choice.setflags(write=False)
    return lv, best, choice


_batch_levels_small = lru_cache(maxsize=8192)(_compute_batch_levels)
_batch_levels_large = lru_cache(maxsize=64)(_compute_batch_levels)


def batch_choice(state: AllocState, counts: dict[str, int], opts: AllocOptions) -> dict[str, int]:
    """The batch size each Trainer with batch choices runs at its count (batch_levels' choice)."""
    if not any(t.batches for t in state.trainers):
        return {}  # nothing to choose: skip building the pool set
    pool = state.pool_set
    out = {}
    for t in state.trainers:
        if not t.batches:
            continue
        k = int(counts.get(t.id, 0))
        c = held(t, pool)
        lv, _, choice = batch_levels(t, opts, max(len(pool), k, c, 1), c)
        i = int(np.searchsorted(lv, k))
        out[t.id] = int(choice[i]) if i < len(lv) and lv[i] == k else int(choice[0])
    return out


def make_result(name: str, state: AllocState, counts: dict[str, int], opts: AllocOptions,
                status: str, build_s: float = 0.0, solve_s: float = 0.0, message: str = "",
                node_map: dict[str, tuple[int, ...]] | None = None,
                objective: float | None = None, details: dict | None = None) -> AllocResult:
    """The AllocResult of feasible counts: every Trainer listed, node map without migration,
    objective by objective_of (or `objective` when the caller already has that same number,
    computed with the same arithmetic in the same Trainer order), allocator-specific `details`."""
    full = {t.id: int(counts.get(t.id, 0)) for t in state.trainers}
    if node_map is None:
        node_map = counts_to_map(state, full)
    return AllocResult(
        allocator=name,
        counts=full,
        node_map=node_map,
        objective=objective_of(state, full, opts) if objective is None else float(objective),
        status=status,
        build_s=build_s,
        solve_s=solve_s,
        message=message,
        batch_sizes=batch_choice(state, full, opts),
        details=dict(details or {}),
    )


def is_feasible(state: AllocState, counts: dict[str, int], pow2: bool = False) -> bool:
    if sum(counts.get(t.id, 0) for t in state.trainers) > len(state.pool):
        return False
    for t in state.trainers:
        k = counts.get(t.id, 0)
        if k and not (t.nmin <= k <= t.nmax):
            return False
        if pow2 and k and (k & (k - 1)):
            return False
    return True
