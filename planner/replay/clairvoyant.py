"""The clairvoyant bound: the most samples any allocator could train in a window that knew its
whole future (every pool change and every arrival), as a time-expanded MILP (Pyomo + HiGHS).

    prob = problem(pool, specs, pj_max=10, grid_s=60)   # the intervals, pool sizes and Trainers
    out = solve(prob, time_limit_s=60)                  # {"samples", "status", "solve_s", "counts", ...}
    bound_summary(pool, specs, scenario, static_samples) -> the `clairvoyant` block of `planner simulate --json`

The model (all times relative to the window start):

- intervals: the window cut at every pool event, every Trainer arrival and every `grid_s`
  seconds; N_i = idle nodes in interval i.
- per Trainer j (submitted inside the window) and interval i from its arrival on: one node count
  k in {0} U [Nmin_j, min(Nmax_j, max N)] (binary x[j,i,k], one per interval);
  sum_j k_ji <= N_i (capacity), at most pj_max Trainers with k > 0 per interval.
- throughput O_j(k) (its curve), gross samples O_j(k) * dt_i.
- the replay's real costs: a count change c -> k at the start of interval i costs Rup_j * O_j(c)
  (k > c) or Rdw_j * O_j(c) (k < c) samples (so starting from 0 is free; a preemption is a
  shrink); a cost is pending until paid from the Trainer's following production (exactly
  min(production, pending) in each interval, as the replay pays it); costs still pending at
  the window's end are never paid.
- a Trainer's samples are its production net of paid costs, at most its work.
- objective: the sum of the Trainers' samples.

Relaxations (why this is an upper bound on every online allocator of the same replay): node
identity is relaxed (any counts that fit N_i are allowed: which node leaves is never a
preemption the plan did not choose), the plan knows the future, and a preemption followed by a
re-grow at the same instant pays one change instead of two. What the bound does NOT relax: counts
change only at interval starts, so a replay that re-decides the instant a Trainer completes
between two cuts has a freedom the bound lacks; `grid_s` keeps that slack small (the property
test tests/unit/test_clairvoyant.py checks the bound against every allocator on random windows).

The LP bound (fluid_bound): the same model without costs and with counts relaxed to time
shares of the levels, one LP solved in seconds; on large pools (Summit, 1,024 nodes: 22-65
levels per Trainer) HiGHS' branch and bound stops at its time limit with a loose dual bound or
none, and the LP bound is the tight one (docs/windows.md, section 2). The reported bound is the
least of the three valid bounds.

Only small windows: more than MAX_INTERVALS intervals, MAX_TRAINERS Trainers or MAX_BINARIES
level variables are refused in one line (InputError naming the field). When HiGHS stops at its
time limit its incumbent is not a bound (the MILP maximises); the reported samples are then
HiGHS' dual (best) bound, still an upper bound, with status "time_limit" and the MIP gap
(simple_bound when HiGHS has no finite dual bound yet).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from planner.allocators import _pyomo
from planner.errors import InputError

GRID_S = 60.0
MAX_INTERVALS = 600
MAX_TRAINERS = 60
MAX_BINARIES = 120_000
TIME_LIMIT_S = 120.0
RELAXATION = ("node identity relaxed (counts that fit the idle pool at each cut); the whole future "
              "known; a preemption and a re-grow at one instant pay one change; counts change at pool "
              "events, arrivals and every grid_s seconds")


@dataclass
class Problem:
    cuts: np.ndarray  # interval starts (relative s), len I; interval i = [cuts[i], cuts[i+1] or T)
    dt: np.ndarray  # interval lengths
    cap: np.ndarray  # N_i
    first: list[int]  # per Trainer: its first interval (arrival)
    levels: list[np.ndarray]  # per Trainer: allowed counts, ascending, starting with 0
    rate: list[np.ndarray]  # per Trainer: O_j(level), samples/s
    rup: np.ndarray
    rdw: np.ndarray
    work: np.ndarray
    ids: list[str]
    pj_max: int
    horizon_s: float

    @property
    def binaries(self) -> int:
        """Count variables of the MILP (b and e, one-hot over the levels)."""
        return 2 * int(sum((len(self.cuts) - f) * len(lv) for f, lv in zip(self.first, self.levels)))


def problem(pool, specs, pj_max: int = 10, grid_s: float | None = GRID_S, check_size: bool = True,
            ticks_s: float | None = None) -> Problem:
    """The time-expanded problem of a replay window (pool: a PoolTrace; specs: TrainerSpecs with
    submit_s relative to the window start). ticks_s: the decision ticks of an `interval` cadence
    (also cuts)."""
    T = float(pool.end_s - pool.start_s)
    specs = sorted([s for s in specs if s.submit_s < T], key=lambda s: s.submit_s)
    pt = np.asarray(pool.times, float) - pool.start_s
    cuts = [0.0, *pt.tolist(), *[float(s.submit_s) for s in specs if s.submit_s > 0]]
    for g in (grid_s, ticks_s):
        if g:
            cuts += np.arange(0.0, T, float(g)).tolist()
    cuts = np.unique(np.asarray([c for c in cuts if 0.0 <= c < T], float))
    dt = np.diff(np.r_[cuts, T])
    keep = dt > 1e-9
    cuts, dt = cuts[keep], dt[keep]
    t_n, n = pool.counts()
    cap = n[np.searchsorted(t_n - pool.start_s, cuts, side="right") - 1].astype(int)
    if check_size and len(cuts) > MAX_INTERVALS:
        raise InputError(f"the clairvoyant bound takes windows of at most {MAX_INTERVALS} intervals (pool "
                         f"events, arrivals, {grid_s:g} s cuts); this one has {len(cuts)}: shorten the window",
                         field="hours")
    if check_size and len(specs) > MAX_TRAINERS:
        raise InputError(f"the clairvoyant bound takes at most {MAX_TRAINERS} Trainers in the window; this one "
                         f"has {len(specs)}: fewer Trainers (count) or a shorter window", field="count")
    kmax = int(cap.max()) if len(cap) else 0
    first, levels, rate = [], [], []
    for s in specs:
        first.append(int(np.searchsorted(cuts, s.submit_s, side="left")))
        hi = min(int(s.nmax), kmax)
        lv = np.r_[0, np.arange(int(s.nmin), hi + 1)] if hi >= s.nmin else np.array([0])
        levels.append(lv.astype(int))
        rate.append(np.asarray([s.curve(int(k)) for k in lv], float))
    prob = Problem(cuts=cuts, dt=dt, cap=cap, first=first, levels=levels, rate=rate,
                   rup=np.asarray([s.rup_s for s in specs], float), rdw=np.asarray([s.rdw_s for s in specs], float),
                   work=np.asarray([s.work_samples for s in specs], float), ids=[s.id for s in specs],
                   pj_max=int(pj_max), horizon_s=T)
    if check_size and prob.binaries > MAX_BINARIES:
        raise InputError(f"the clairvoyant bound takes at most {MAX_BINARIES:,} count variables; this window "
                         f"needs {prob.binaries:,} (Trainers x intervals x counts): a smaller pool_size, fewer "
                         "Trainers or a shorter window", field="pool_size")
    return prob


# ---------------------------------------------------------------- the accounting of one plan

def plan_samples(prob: Problem, plan: np.ndarray) -> float:
    """Samples of a plan (plan[j, i] = node count of Trainer j in interval i), by the model's
    rules: the reference the MILP is tested against (brute force on tiny problems)."""
    total = 0.0
    for j in range(len(prob.ids)):
        lv = prob.levels[j]
        prev_rate, prev_k, pend, net = 0.0, 0, 0.0, 0.0
        for i in range(len(prob.cuts)):
            k = int(plan[j, i])
            r = float(prob.rate[j][np.searchsorted(lv, k)]) if k else 0.0
            if k > prev_k:
                pend += prob.rup[j] * prev_rate
            elif k < prev_k:
                pend += prob.rdw[j] * prev_rate
            g = r * prob.dt[i]
            pay = min(g, pend)
            pend -= pay
            net += g - pay
            prev_rate, prev_k = r, k
        total += min(net, prob.work[j])
    return total


def feasible(prob: Problem, plan: np.ndarray) -> bool:
    for i in range(len(prob.cuts)):
        col = plan[:, i]
        if col.sum() > prob.cap[i] or (col > 0).sum() > prob.pj_max:
            return False
    for j, f in enumerate(prob.first):
        if plan[j, :f].any() or not np.isin(plan[j], prob.levels[j]).all():
            return False
    return True


def brute_force(prob: Problem, limit: int = 200_000) -> tuple[float, np.ndarray]:
    """The best plan by enumeration (tiny problems only: refuses more than `limit` plans)."""
    J, I = len(prob.ids), len(prob.cuts)  # noqa: E741
    choices = []
    for j in range(J):
        for i in range(I):
            choices.append(prob.levels[j].tolist() if i >= prob.first[j] else [0])
    n = math.prod(len(c) for c in choices)
    if n > limit:
        raise ValueError(f"{n} plans: too many to enumerate")
    best, best_plan = -1.0, None
    for combo in itertools.product(*choices):
        plan = np.asarray(combo, int).reshape(J, I)
        if not feasible(prob, plan):
            continue
        v = plan_samples(prob, plan)
        if v > best:
            best, best_plan = v, plan
    return best, best_plan


def hold_plan(prob: Problem, allowance: np.ndarray) -> np.ndarray:
    """The best plan of each Trainer on its own within allowance[j, i] nodes (a feasible plan, so
    the result is feasible too: fewer nodes never break the pool or pj_max): a dynamic program
    over (interval, count) that charges each change's cost at once (Rup_j * O_j(c) to grow from c,
    Rdw_j * O_j(c) to shrink), so it holds counts where a change does not pay. The LP's rounded
    plan ignores costs and may move nodes between Trainers at every cut."""
    J, I = allowance.shape  # noqa: E741
    plan = np.zeros((J, I), int)
    for j in range(J):
        lv, rate, f = prob.levels[j], prob.rate[j], prob.first[j]
        if I - f <= 0 or len(lv) == 1:
            continue
        up = prob.rup[j] * rate[:, None] * (lv[None, :] > lv[:, None])  # [from, to]
        dn = prob.rdw[j] * rate[:, None] * (lv[None, :] < lv[:, None])
        move = up + dn
        val = np.where(lv == 0, 0.0, -np.inf)  # before its first interval: 0 nodes
        back = np.zeros((I, len(lv)), int)
        for i in range(f, I):
            cand = val[:, None] - move  # [from, to]
            back[i] = np.argmax(cand, axis=0)
            val = cand[back[i], np.arange(len(lv))] + rate * float(prob.dt[i])
            val[lv > allowance[j, i]] = -np.inf
        q = int(np.argmax(val))
        for i in range(I - 1, f - 1, -1):
            plan[j, i] = int(lv[q])
            q = int(back[i, q])
    return plan


# ---------------------------------------------------------------- the MILP

def build(prob: Problem):
    """The Pyomo model of `prob` (samples scaled by 1/scale so that the numbers stay moderate).

    Per Trainer j and interval i: b (count right after the cut), e (count just before the next
    cut), both binary one-hot over the levels, and z (time shares of the levels inside the
    interval, continuous). Without a completion in the interval b = e = z (counts change only at
    cuts). An interval where some Trainer completes (done[j, i]: its net samples reached its
    work by the interval's end, and it holds no nodes afterwards) lets every Trainer's counts
    move inside it at no cost, as a replay re-decides at a completion: z then only has to fit
    the pool on average (node-seconds) and pj_max on average.
    """
    import pyomo.environ as pyo  # lazy: heavy (pyomo)

    J, I = len(prob.ids), len(prob.cuts)  # noqa: E741
    omax = max([float(r.max()) for r in prob.rate] + [0.0])
    scale = omax if omax > 0 else 1.0  # samples -> seconds of the fastest Trainer's top rate
    m = pyo.ConcreteModel()
    m.scale = scale
    idx = [(j, i, q) for j in range(J) for i in range(prob.first[j], I) for q in range(len(prob.levels[j]))]
    m.b = pyo.Var(idx, domain=pyo.Binary)
    m.e = pyo.Var(idx, domain=pyo.Binary)
    m.z = pyo.Var(idx, bounds=(0.0, 1.0))
    ji = [(j, i) for j in range(J) for i in range(prob.first[j], I)]
    chg = [(j, i) for (j, i) in ji if i > prob.first[j]]
    m.done = pyo.Var(ji, domain=pyo.Binary)
    m.up = pyo.Var(chg, domain=pyo.Binary)
    m.dn = pyo.Var(chg, domain=pyo.Binary)
    m.cost = pyo.Var(chg, domain=pyo.NonNegativeReals)
    m.pay = pyo.Var(ji, domain=pyo.NonNegativeReals)
    m.pend = pyo.Var(ji, domain=pyo.NonNegativeReals)
    m.w = pyo.Var(chg, domain=pyo.Binary)
    m.s = pyo.Var(range(J), domain=pyo.NonNegativeReals)
    m.c = pyo.ConstraintList()
    Q = [range(len(lv)) for lv in prob.levels]

    def k_of(v, j, i):
        return sum(int(prob.levels[j][q]) * v[j, i, q] for q in Q[j])

    def r_of(v, j, i):  # scaled samples/s
        return sum(float(prob.rate[j][q]) / scale * v[j, i, q] for q in Q[j] if q)

    lic = {}
    for i in range(I):
        here = [j for j in range(J) if prob.first[j] <= i]
        lic[i] = sum(m.done[j, i] for j in here) if here else 0
    for j, i in ji:
        for v in (m.b, m.e, m.z):
            m.c.add(sum(v[j, i, q] for q in Q[j]) == 1)
        for q in Q[j]:  # no completion in the interval: the count holds from cut to cut
            m.c.add(m.z[j, i, q] >= m.b[j, i, q] - lic[i])
            m.c.add(m.e[j, i, q] >= m.b[j, i, q] - lic[i])
    for i in range(I):
        here = [j for j in range(J) if prob.first[j] <= i]
        if not here:
            continue
        for v in (m.b, m.e, m.z):
            m.c.add(sum(k_of(v, j, i) for j in here) <= int(prob.cap[i]))
            if len(here) > prob.pj_max:
                m.c.add(sum(1 - v[j, i, 0] for j in here) <= prob.pj_max)
    for j in range(J):
        kmax = int(prob.levels[j][-1])
        rmax = float(prob.rate[j].max()) / scale
        tot_cost = max(prob.rup[j], prob.rdw[j]) * rmax * max(I - prob.first[j], 1)
        net = 0
        for i in range(prob.first[j], I):
            g = r_of(m.z, j, i) * float(prob.dt[i])
            prev_pend = m.pend[j, i - 1] if i > prob.first[j] else 0.0
            if i > prob.first[j]:
                d = k_of(m.b, j, i) - k_of(m.e, j, i - 1)
                m.c.add(d <= kmax * m.up[j, i])
                m.c.add(-d <= kmax * m.dn[j, i])
                rp = r_of(m.e, j, i - 1)
                m.c.add(m.cost[j, i] >= prob.rup[j] * rp - prob.rup[j] * rmax * (1 - m.up[j, i]))
                m.c.add(m.cost[j, i] >= prob.rdw[j] * rp - prob.rdw[j] * rmax * (1 - m.dn[j, i]))
                due = prev_pend + m.cost[j, i]
                big = tot_cost + rmax * float(prob.dt[i])
                # pay exactly min(production, pending): the solver picks which of the two binds
                m.c.add(m.pay[j, i] >= due - big * (1 - m.w[j, i]))
                m.c.add(m.pay[j, i] >= g - big * m.w[j, i])
                # completed before this interval: no nodes from now on
                m.c.add(m.b[j, i, 0] >= sum(m.done[j, h] for h in range(prob.first[j], i)))
            else:
                due = prev_pend
                m.c.add(m.pay[j, i] == 0)
            m.c.add(m.pay[j, i] <= g)
            m.c.add(m.pend[j, i] == due - m.pay[j, i])
            net = net + g - m.pay[j, i]
            # done in interval i only if its net samples reach its work by the interval's end
            m.c.add(net >= min(float(prob.work[j]) / scale, 1e9) * m.done[j, i])
        m.c.add(sum(m.done[j, i] for i in range(prob.first[j], I)) <= 1)
        m.c.add(m.s[j] <= (float(prob.work[j]) / scale if rmax > 0 else 0.0))
        m.c.add(m.s[j] <= net)
    m.obj = pyo.Objective(expr=sum(m.s[j] for j in range(J)), sense=pyo.maximize)
    return m


def simple_bound(prob: Problem) -> float:
    """An upper bound on the MILP that needs no solver: every interval's gross production is at
    most min(the best per-node rate x N_i, the sum of the present Trainers' top rates), every
    Trainer's at most min(its work, its top rate x its time in the window); costs only subtract.
    Used when HiGHS stops before it has a finite dual bound, and to cap the one it has."""
    if not prob.ids:
        return 0.0
    rmax = np.asarray([float(r.max()) for r in prob.rate])
    per_node = max([float((r[1:] / lv[1:]).max()) for r, lv in zip(prob.rate, prob.levels) if len(lv) > 1]
                   + [0.0])
    first = np.asarray(prob.first)
    pool_side = sum(float(prob.dt[i]) * min(per_node * float(prob.cap[i]), float(rmax[first <= i].sum()))
                    for i in range(len(prob.cuts)))
    left = np.asarray([float(prob.dt[f:].sum()) for f in prob.first])
    trainer_side = float(np.minimum(prob.work, rmax * left).sum())
    return min(pool_side, trainer_side)


def fluid_bound(prob: Problem, time_limit_s: float = TIME_LIMIT_S) -> tuple[float | None, np.ndarray | None, float]:
    """An upper bound from one LP (Pyomo + HiGHS): the MILP with every cost dropped and the counts
    relaxed to time shares of the levels (z[j, i, q] >= 0, sum_q z = 1: a Trainer may hold any
    mix of its allowed counts inside an interval, so its rate is the concave hull of its curve),
    the pool and pj_max kept per interval (on those averages), each Trainer's samples at most its
    work. Every plan of the MILP is feasible here with at least its samples (costs only subtract),
    so this bounds the MILP, and it needs no branching: it is solved to optimality in seconds
    where the MILP's branch and bound stops at its time limit with a loose dual bound (measured in
    docs/windows.md). Returns (samples or None when HiGHS did not prove it, the LP's plan rounded
    down to allowed counts (round_plan; a feasible plan of the MILP, so plan_samples of it is a
    lower bound on the MILP's optimum), solve s)."""
    import pyomo.environ as pyo  # lazy: heavy (pyomo)

    t0 = time.perf_counter()
    J, I = len(prob.ids), len(prob.cuts)  # noqa: E741
    if J == 0:
        return 0.0, np.zeros((0, I), int), 0.0
    omax = max([float(r.max()) for r in prob.rate] + [0.0])
    scale = omax if omax > 0 else 1.0
    m = pyo.ConcreteModel()
    idx = [(j, i, q) for j in range(J) for i in range(prob.first[j], I) for q in range(len(prob.levels[j]))]
    m.z = pyo.Var(idx, bounds=(0.0, 1.0))
    m.s = pyo.Var(range(J), bounds=lambda m, j: (0.0, float(prob.work[j]) / scale))
    m.c = pyo.ConstraintList()
    by_ji: dict = {}
    for j, i, q in idx:
        by_ji.setdefault((j, i), []).append(q)
    for (j, i), qs in by_ji.items():
        m.c.add(sum(m.z[j, i, q] for q in qs) == 1)
    for i in range(I):
        here = [j for j in range(J) if prob.first[j] <= i]
        if not here:
            continue
        terms = [int(prob.levels[j][q]) * m.z[j, i, q] for j in here for q in by_ji[j, i] if q]
        if terms:  # (a Trainer whose Nmin exceeds the pool has level 0 only)
            m.c.add(sum(terms) <= int(prob.cap[i]))
        if len(here) > prob.pj_max:
            m.c.add(sum(1 - m.z[j, i, 0] for j in here) <= prob.pj_max)
    for j in range(J):
        m.c.add(m.s[j] <= sum(float(prob.rate[j][q]) / scale * float(prob.dt[i]) * m.z[j, i, q]
                              for i in range(prob.first[j], I) for q in by_ji[j, i] if q))
    m.obj = pyo.Objective(expr=sum(m.s[j] for j in range(J)), sense=pyo.maximize)
    out = _pyomo.solve(m, time_limit_s, 0.0)
    if out.status != "optimal" or out.objective is None:
        return None, None, time.perf_counter() - t0
    # HiGHS' LP optimum up to its feasibility tolerances: its dual bound when it has one
    val = max(out.objective, out.bound if out.bound is not None else out.objective) * scale
    avg = np.zeros((J, I))
    for (j, i, q), v in m.z.items():
        avg[j, i] += int(prob.levels[j][q]) * float(v.value or 0.0)
    return float(val) * (1.0 + 1e-7), hold_plan(prob, round_plan(prob, avg)), time.perf_counter() - t0


def round_plan(prob: Problem, avg: np.ndarray) -> np.ndarray:
    """A feasible plan from average counts avg[j, i]: each rounded down to an allowed count (0 or
    a level), and where more than pj_max Trainers hold nodes the smallest holders dropped."""
    J, I = avg.shape  # noqa: E741
    plan = np.zeros((J, I), int)
    for j in range(J):
        lv = prob.levels[j]
        for i in range(prob.first[j], I):
            q = int(np.searchsorted(lv, avg[j, i] + 1e-7, side="right")) - 1
            plan[j, i] = int(lv[max(q, 0)])
    for i in range(I):
        held = np.flatnonzero(plan[:, i] > 0)
        if len(held) > prob.pj_max:
            drop = held[np.argsort(plan[held, i], kind="stable")][: len(held) - prob.pj_max]
            plan[drop, i] = 0
        # nodes the rounding (or the LP, where a Trainer's work was already reached) left idle go to
        # the holders first, then to Trainers present (pj_max permitting), up to their top count
        left = int(prob.cap[i]) - int(plan[:, i].sum())
        present = [j for j in range(J) if prob.first[j] <= i and len(prob.levels[j]) > 1]
        for j in sorted(present, key=lambda j: plan[j, i] == 0):
            if left <= 0:
                break
            lv = prob.levels[j]
            if plan[j, i] == 0 and (int((plan[:, i] > 0).sum()) >= prob.pj_max or lv[1] > left):
                continue
            q = int(np.searchsorted(lv, plan[j, i] + left, side="right")) - 1
            left -= int(lv[q]) - int(plan[j, i])
            plan[j, i] = int(lv[q])
    return plan


def solve(prob: Problem, time_limit_s: float = TIME_LIMIT_S, mip_gap: float = 1e-6,
          solver_options: dict | None = None) -> dict:
    """Solve the MILP (a maximisation); when HiGHS does not prove the optimum, also the LP bound
    (fluid_bound, seconds, after the MILP's time limit). samples: the optimum when HiGHS proves
    it; when HiGHS stops early (time limit, or a node limit in solver_options) its incumbent is
    NOT a bound: samples is then the least of the valid bounds, HiGHS' dual bound, the LP bound and
    simple_bound (bound_source says which), status "time_limit", incumbent_samples the best plan
    found (HiGHS' or the LP's rounded plan, valued by plan_samples; None without one) and
    mip_gap = (bound - incumbent) / bound: the MILP's optimum lies in [incumbent, bound]."""
    J, I = len(prob.ids), len(prob.cuts)  # noqa: E741
    base = {"intervals": I, "trainers": J, "binaries": prob.binaries, "grid_s": None, "relaxation": RELAXATION}
    if J == 0:
        return {**base, "samples": 0.0, "incumbent_samples": 0.0, "mip_gap": 0.0, "bound_source": "empty",
                "status": "optimal", "solve_s": 0.0, "build_s": 0.0, "counts": None, "message": "",
                "lp_bound_samples": 0.0, "lp_solve_s": 0.0}
    t0 = time.perf_counter()
    m = build(prob)
    build_s = time.perf_counter() - t0
    out = _pyomo.solve(m, time_limit_s, mip_gap, solver_options=solver_options)
    proved = out.status in ("optimal", "optimal-within-gap")
    lp = lp_plan = lp_inc = None
    lp_s = 0.0
    if not proved:  # the LP bound and its plan (seconds; a proven optimum needs neither)
        lp, lp_plan, lp_s = fluid_bound(prob, min(time_limit_s, TIME_LIMIT_S))
        lp_inc = float(plan_samples(prob, lp_plan)) if lp_plan is not None and feasible(prob, lp_plan) else None
    inc = out.objective * m.scale if out.has_solution and out.objective is not None else None
    cheap = simple_bound(prob)
    if proved:
        # the optimum plus the remaining gap (mip_gap is small): report the proven bound
        ub = max(out.bound if out.bound is not None else out.objective, out.objective) * m.scale
        source = "highs"
    elif out.bound is not None:
        ub, source = out.bound * m.scale, "highs-dual"
    else:
        ub, source = cheap, "simple"
    if not proved:  # the tightest of the valid bounds
        for val, name in ((lp, "lp"), (cheap, "simple")):
            if val is not None and val < ub:
                ub, source = val, name
        if lp_inc is not None and (inc is None or lp_inc > inc):
            inc = lp_inc  # the LP's rounded plan beats HiGHS' incumbent: the gap is measured from it
    if inc is not None:
        ub = max(ub, inc)  # round-off only: a plan cannot beat the bound
    gap = (ub - inc) / ub if inc is not None and ub > 0 else (0.0 if ub == 0 else None)
    counts = None
    if out.has_solution:
        counts = np.zeros((J, I), int)
        for (j, i, q), v in m.b.items():
            if v.value is not None and v.value > 0.5:
                counts[j, i] = int(prob.levels[j][q])
    return {**base, "samples": ub, "incumbent_samples": inc, "plan_samples": inc, "mip_gap": gap,
            "bound_source": source, "status": "optimal" if proved else "time_limit", "message": out.message,
            "solve_s": out.solve_s + lp_s, "build_s": build_s, "counts": counts, "lp_bound_samples": lp,
            "lp_plan_samples": lp_inc, "lp_solve_s": lp_s}


def bound_summary(pool, specs, sc, static_samples: float | None, grid_s: float = GRID_S,
                  time_limit_s: float = TIME_LIMIT_S) -> dict:
    """The `clairvoyant` block of a replay's summary (sc: the Scenario; refuses large windows)."""
    ticks = float(sc.step_min) * 60.0 if sc.cadence == "interval" else None
    prob = problem(pool, specs, pj_max=int(sc.pj_max), grid_s=grid_s, ticks_s=ticks)
    out = solve(prob, time_limit_s=time_limit_s, mip_gap=float(sc.mip_gap))
    s = out["samples"]
    return {"samples": s, "utilization_efficiency": (s / static_samples) if (s is not None and static_samples)
            else None, "status": out["status"], "solve_s": out["solve_s"], "build_s": out["build_s"],
            "mip_gap": out["mip_gap"], "incumbent_samples": out["incumbent_samples"],
            "bound_source": out["bound_source"], "lp_bound_samples": out["lp_bound_samples"],
            "lp_solve_s": out["lp_solve_s"],
            "intervals": out["intervals"], "trainers": out["trainers"], "binaries": out["binaries"],
            "grid_s": grid_s, "relaxation": RELAXATION.replace("grid_s seconds", f"{grid_s:g} s")}
