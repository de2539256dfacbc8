"""`horizon-milp`: ModelArts' rolling-horizon MILP (Hu et al., "An Optimal Resource Allocator of
Elastic Training for Deep Learning Jobs on Cloud", 2021), Pyomo + HiGHS.

The model, over T steps (opts.horizon_steps) of f minutes (opts.step_min), on a pool of P nodes
(the pool seen now, |state.pool|, used for every step):

    levels    L_i = {0} U {k = 2^m : Nmin_i <= k <= min(Nmax_i, P)}        (powers of two)
    z[i,t,k]  binary, job i runs on k in L_i \\ {0} nodes during step t; sum_k z[i,t,k] <= 1
              (one indicator per power of two, as in the paper; "all zero" is the level 0)
    u[i,t]    progress of job i by the end of step t as a fraction of its demand d_i,
              0 <= u[i,t] <= 1                 (served demand <= remaining demand: s_i^t <= d_i)
              u[i,t] <= u[i,t-1] + sum_k r_i(k)/d_i * z[i,t,k],   u[i,0] = 0
    capacity  sum_i sum_k k * z[i,t,k] <= P                                  for every step t
    running   a job that holds nodes now keeps at least its minimum level until its demand is
              served:  sum_k z[i,t,k] >= 1 - u[i,t-1]    (binding only while u < 1)
              (dropped, for all jobs, when the running jobs' minimum levels exceed P, e.g. after
              a `log` pool shrank; the allocator may then stop a running job)
    maximise  sum_i sum_t u[i,t]            (= the paper's sum_i sum_t s_i^t / d_i)

Progress per step r_i(k) and demand d_i by opts.speed_rule:
  - "curve" (default): r_i(k) = O_i(k) * f * 60 samples (the Trainer's measured curve),
    d_i = remaining_samples; when the Trainer carries an ETA (eta_node_h, as the simulator
    always passes), d_i = eta_node_h * 3600 * O_i(1): the ETA in samples at the one-node rate,
    which equals remaining_samples when the ETA is exact and carries its error when it is not.
  - "modelarts": the paper's rule r_i(k) = p * k * 0.8^log2(k) node-hours, p = f/60 h (step
    length), d_i = eta_node_h (the job's ETA as the allocator sees it, possibly noisy; when a
    Trainer has none, remaining_samples / (3600 * O_i(1)) node-hours).
A non-finite demand is replaced by the job's most progress over the horizon (r_i(kmax) * T),
so it is never capped and weighs like a job needing the whole horizon at full size.

Exact reductions (optimum unchanged, tested): shares clipped at 1; levels above the first that
finishes a job inside one step dropped; waiting jobs that finish inside one step on their lowest
level k aggregated into one integer per (k, step) (which ones start: FCFS); running jobs that
finish inside step 1 on their lowest level fixed there. A greedy plan is the MIP start.

Only the first step is applied: counts = step-1 levels. Step-1 nodes the plan leaves unused
(no job gains from them at step granularity) follow opts.extra["spare_nodes"]: "spread"
(default: doubling the slowest-to-finish running job while they allow; the objective is
unchanged), "fewest" (each job on the fewest nodes with the same step-1 progress) or "none".
The node map comes from base.counts_to_map (no migration). Fallback (status "fallback"): when
HiGHS finds no feasible point within the time limit, every Trainer keeps what it holds
(base.keep_current with pow2: powers of two within the bounds and the pool).

Workload perturbations of the paper's robustness study (ETA noise, bug jobs, killed jobs) are
defined here too, as `perturb_workload`, so the simulator can apply them; see docs/horizon.md.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field, replace

import pyomo.environ as pyo
from pyomo.contrib.appsi.base import TerminationCondition
from pyomo.contrib.appsi.solvers.highs import Highs
from pyomo.core.expr.numeric_expr import LinearExpression

from planner.allocators._pyomo import FAST_OPTIONS
from planner.allocators.base import (
    AllocOptions,
    AllocResult,
    AllocState,
    TrainerState,
    counts_to_map,
    fcfs_eligible,
    keep_current,
)

NAME = "horizon-milp"
SPEED_RULES = ("curve", "modelarts")
SPARE_RULES = ("spread", "fewest", "none")
# HiGHS options: one thread (the machine is shared), no log, and no primal heuristics: the
# greedy warm start is already a good (often the optimal) plan and the sub-MIP heuristics
# (RINS/RENS, B's FAST_OPTIONS in planner.allocators._pyomo) took most of the solve time on
# the study's large queues while rarely improving on it (docs/horizon.md).
HIGHS_OPTIONS = {"threads": 1, "output_flag": False, **FAST_OPTIONS,
                 "mip_heuristic_run_feasibility_jump": False, "mip_heuristic_effort": 0.0}
MODELARTS_EFFICIENCY = 0.8  # progress per node falls by this factor per doubling


def pow2_levels(t: TrainerState, pool_nodes: int) -> list[int]:
    """Positive node counts job t may run on: powers of two in [Nmin, min(Nmax, pool)]."""
    hi = min(int(t.nmax), int(pool_nodes))
    lo = max(int(t.nmin), 1)
    out, k = [], 1
    while k <= hi:
        if k >= lo:
            out.append(k)
        k *= 2
    return out


def modelarts_rate_node_h(k: int, step_h: float) -> float:
    """The paper's progress per step on k nodes: p * k * 0.8^log2(k) node-hours."""
    if k <= 0:
        return 0.0
    return step_h * k * MODELARTS_EFFICIENCY ** math.log2(k)


def demand_and_rates(t: TrainerState, levels: list[int], opts: AllocOptions) -> tuple[float, list[float]]:
    """(d_i, [r_i(k) for k in levels]) in the speed rule's unit (samples or node-hours)."""
    step_s = float(opts.step_min) * 60.0
    if opts.speed_rule == "curve":
        rates = [t.curve(k) * step_s for k in levels]
        one = t.curve.one_node
        if t.eta_node_h is not None and one > 0:
            demand = float(t.eta_node_h) * 3600.0 * one  # the ETA in samples at the 1-node rate
        else:
            demand = float(t.remaining_samples)
    elif opts.speed_rule == "modelarts":
        rates = [modelarts_rate_node_h(k, step_s / 3600.0) for k in levels]
        if t.eta_node_h is not None:
            demand = float(t.eta_node_h)
        else:
            one = t.curve.one_node
            demand = float(t.remaining_samples) / (3600.0 * one) if one > 0 else math.inf
    else:
        raise ValueError(f"unknown speed rule {opts.speed_rule!r}; choose one of {', '.join(SPEED_RULES)}")
    if not math.isfinite(demand):
        demand = max(rates, default=0.0) * int(opts.horizon_steps)
    return demand, rates


def _status_of(tc, best_obj, bound) -> str:
    if tc == TerminationCondition.optimal:
        if best_obj is not None and bound is not None and abs(bound - best_obj) > 1e-9 * (1.0 + abs(best_obj)):
            return "optimal-within-gap"
        return "optimal"
    return "time-limit-feasible"


@dataclass
class HorizonPlan:
    """The whole solved horizon; `allocate` applies only its first step."""

    steps: int
    step_min: float
    pool_nodes: int
    counts: list[dict[str, int]] = field(default_factory=list)  # per step: trainer id -> nodes
    progress: list[dict[str, float]] = field(default_factory=list)  # per step: id -> u (fraction of demand)
    objective: float = 0.0
    status: str = "optimal"
    build_s: float = 0.0
    solve_s: float = 0.0
    message: str = ""
    keep_running: bool = True


def greedy_start(jobs: list, T: int, P: int, keep_running: bool) -> list[list[int]]:
    """A feasible plan to warm-start HiGHS: level index per job and step (-1 = no nodes).

    Step by step: running jobs that still need work take their lowest level (when the model
    keeps running jobs), then nodes go one level-upgrade at a time to the best progress gain
    per added node, the gain weighted by the T - t sums it enters. Feasible by construction.
    """
    import heapq

    rem = [1.0] * len(jobs)
    plan_q = [[-1] * T for _ in jobs]
    for t in range(T):
        free = P
        q = [-1] * len(jobs)
        for j, (_, levels, frac, running) in enumerate(jobs):
            if running and keep_running and rem[j] > 1e-12:
                q[j] = 0
                free -= levels[0]

        def cand(j):
            levels, frac = jobs[j][1], jobs[j][2]
            nq = q[j] + 1
            if nq >= len(levels) or rem[j] <= 1e-12:
                return None
            cur_g = min(frac[q[j]], rem[j]) if q[j] >= 0 else 0.0
            cur_k = levels[q[j]] if q[j] >= 0 else 0
            gain = min(frac[nq], rem[j]) - cur_g
            if gain <= 1e-12:
                return None
            return (-gain / (levels[nq] - cur_k), j, nq, levels[nq] - cur_k)

        heap = [c for c in (cand(j) for j in range(len(jobs))) if c is not None]
        heapq.heapify(heap)
        while heap:
            _, j, nq, add = heapq.heappop(heap)
            if nq != q[j] + 1:
                continue
            if add > free:
                continue  # this upgrade does not fit; smaller upgrades of others may
            q[j] = nq
            free -= add
            c = cand(j)
            if c is not None:
                heapq.heappush(heap, c)
        for j in range(len(jobs)):
            plan_q[j][t] = q[j]
            if q[j] >= 0:
                rem[j] = max(rem[j] - jobs[j][2][q[j]], 0.0)
    return plan_q


def _spread_spare(jobs: list, extra: list, counts: dict[str, int], P: int) -> None:
    """Give step-1 nodes nobody in the plan uses to jobs already running in step 1.

    Spare nodes at an optimum exist only where no job gains from them within the step's
    granularity (a job finishing inside the step on k nodes gains nothing from 2k in the
    objective, yet finishes sooner in real time). Repeatedly double the job that would take
    longest to finish its demand at its step-1 size (smallest unclipped r(k)/d), while the
    doubling fits the spare nodes and its Nmax. Deterministic; later steps are not touched.
    """
    free = P - sum(counts.values())
    while free > 0:
        best = None
        for j, (tr, _, _, _) in enumerate(jobs):
            k = counts.get(tr.id, 0)
            if not k:
                continue
            all_levels, raw = extra[j]
            qi = all_levels.index(k)
            if qi + 1 >= len(all_levels) or all_levels[qi + 1] - k > free:
                continue
            if raw[qi + 1] <= raw[qi]:
                continue  # no faster on more nodes
            if best is None or raw[qi] < best[0]:
                best = (raw[qi], j, qi)
        if best is None:
            return
        _, j, qi = best
        tr = jobs[j][0]
        all_levels = extra[j][0]
        free -= all_levels[qi + 1] - all_levels[qi]
        counts[tr.id] = all_levels[qi + 1]


def _solve(m, opts: AllocOptions, warm: bool, out: HorizonPlan):
    """Run HiGHS on the model; sets out.solve_s/status/objective; None when there is no plan."""
    solver = Highs(only_child_vars=True)  # the solver behind pyo.SolverFactory("appsi_highs"), called through its own API
    solver.config.time_limit = max(float(opts.time_limit_s), 1e-3)
    solver.config.mip_gap = float(opts.mip_gap)
    solver.config.load_solution = False
    solver.config.stream_solver = False
    solver.config.warmstart = warm
    solver.highs_options = {**HIGHS_OPTIONS, **dict(opts.extra.get("highs_options", {}))}
    t1 = time.perf_counter()
    try:
        res = solver.solve(m)
    except Exception as e:  # HiGHS missing or raising: keep the current map (fallback), never crash a replay
        out.solve_s = time.perf_counter() - t1
        out.status = "fallback"
        out.message = f"solver raised {type(e).__name__}: {' '.join(str(e).split())[:200]}"
        return None
    out.solve_s = time.perf_counter() - t1

    best = res.best_feasible_objective
    if best is None or not math.isfinite(best):
        out.status = "fallback"
        out.message = f"no feasible point ({res.termination_condition.name})"
        return None
    out.status = _status_of(res.termination_condition, best, res.best_objective_bound)
    out.objective = float(best)
    return res


def plan(state: AllocState, opts: AllocOptions) -> HorizonPlan:
    """Build and solve the horizon model; counts per step for every Trainer in `state`."""
    t0 = time.perf_counter()
    P = len(state.pool)
    T = max(int(opts.horizon_steps), 1)
    if opts.speed_rule not in SPEED_RULES:
        raise ValueError(f"unknown speed rule {opts.speed_rule!r}; choose one of {', '.join(SPEED_RULES)}")
    eligible, _ = fcfs_eligible(state, opts.pj_max)

    # jobs that enter the model: some level fits and some demand remains
    jobs = []  # (trainer, levels, rate fractions r/d, running)
    extra = []  # (every pow2 level that fits, unclipped r/d): for the spare-node rule
    spare_rule = str(opts.extra.get("spare_nodes", "spread"))
    if spare_rule not in SPARE_RULES:
        raise ValueError(f"unknown spare_nodes rule {spare_rule!r}; choose one of {', '.join(SPARE_RULES)}")
    poolset = set(state.pool)
    for t in eligible:
        levels = pow2_levels(t, P)
        if not levels:
            continue
        demand, rates = demand_and_rates(t, levels, opts)
        if not (demand > 0) or max(rates) <= 0:
            continue
        # progress fraction per step, clipped at 1 (u <= 1 anyway; this tightens the LP), and
        # levels above the first that finishes the job inside one step dropped (dominated:
        # same progress on more nodes) -- both exact
        raw = [r / demand for r in rates]
        frac = [min(x, 1.0) for x in raw]
        all_levels = list(levels)
        if 1.0 in frac:
            cut = frac.index(1.0) + 1
            levels, frac = levels[:cut], frac[:cut]
        running = any(x in poolset for x in t.current)
        jobs.append((t, levels, frac, running))
        extra.append((all_levels, raw))

    zero = {t.id: 0 for t in state.trainers}
    out = HorizonPlan(steps=T, step_min=float(opts.step_min), pool_nodes=P,
                      counts=[dict(zero) for _ in range(T)],
                      progress=[{t.id: 0.0 for t in state.trainers} for _ in range(T)])
    if not jobs:
        out.build_s = time.perf_counter() - t0
        out.message = "no job can run"
        return out

    keep_running = sum(levels[0] for _, levels, _, running in jobs if running) <= P
    out.keep_running = keep_running

    # Exact aggregation: waiting jobs that finish inside one step on their lowest level are
    # interchangeable when they share that level k (each is worth T - t if started in step t,
    # and nothing after), so one integer y[c,t] (how many of class c start in step t) replaces
    # their binaries. Which of them start is then decided FCFS. opts.extra {"aggregate": False}
    # keeps one binary per job and step.
    aggregate = bool(opts.extra.get("aggregate", True))
    # Likewise exact: a running job (kept running) that finishes inside step 1 on its lowest
    # level takes that level in step 1 and has nothing left to gain after: fixed, not modelled.
    classes: dict[int, list[int]] = {}
    model_j: list[int] = []
    fixed_j: list[int] = []
    for j, (tr, levels, frac, running) in enumerate(jobs):
        if aggregate and len(levels) == 1 and frac[0] >= 1.0:
            if not running:
                classes.setdefault(levels[0], []).append(j)
            elif keep_running:
                fixed_j.append(j)
            else:
                model_j.append(j)
        else:
            model_j.append(j)
    fixed_nodes = sum(jobs[j][1][0] for j in fixed_j)
    fixed_value = float(T * len(fixed_j))
    for members in classes.values():
        members.sort(key=lambda j: (jobs[j][0].submit_s, j))
    cls = sorted(classes)

    m = pyo.ConcreteModel()
    zi = [(j, t, q) for j in model_j for t in range(T) for q in range(len(jobs[j][1]))]
    ui = [(j, t) for j in model_j for t in range(T)]
    yi = [(c, t) for c in cls for t in range(T)]
    m.z = pyo.Var(zi, domain=pyo.Binary, dense=True)
    m.u = pyo.Var(ui, bounds=(0.0, 1.0), dense=True)
    m.y = pyo.Var(yi, domain=pyo.NonNegativeIntegers, dense=True)
    z, u, y = m.z, m.u, m.y
    for c in cls:
        for t in range(T):
            y[c, t].setub(len(classes[c]))
    m.c = pyo.ConstraintList()
    add = m.c.add
    for j in model_j:
        tr, levels, frac, running = jobs[j]
        nq = len(levels)
        for t in range(T):
            zs = [z[j, t, q] for q in range(nq)]
            if nq > 1:
                add(LinearExpression(linear_coefs=[1.0] * nq, linear_vars=zs) <= 1)
            # u[j,t] - u[j,t-1] - sum_q frac_q z[j,t,q] <= 0
            coefs, vs = [1.0], [u[j, t]]
            if t > 0:
                coefs.append(-1.0)
                vs.append(u[j, t - 1])
            coefs += [-f for f in frac]
            vs += zs
            add(LinearExpression(linear_coefs=coefs, linear_vars=vs) <= 0)
            if running and keep_running:
                if t == 0:
                    add(LinearExpression(linear_coefs=[1.0] * nq, linear_vars=zs) >= 1)
                else:
                    add(LinearExpression(linear_coefs=[1.0] * nq + [1.0], linear_vars=zs + [u[j, t - 1]]) >= 1)
    for c in cls:
        if T > 1:
            add(LinearExpression(linear_coefs=[1.0] * T, linear_vars=[y[c, t] for t in range(T)]) <= len(classes[c]))
    for t in range(T):
        coefs, vs = [], []
        for j in model_j:
            for q, k in enumerate(jobs[j][1]):
                coefs.append(float(k))
                vs.append(z[j, t, q])
        for c in cls:
            coefs.append(float(c))
            vs.append(y[c, t])
        add(LinearExpression(linear_coefs=coefs, linear_vars=vs) <= P - (fixed_nodes if t == 0 else 0))
    m.obj = pyo.Objective(expr=LinearExpression(
        constant=fixed_value, linear_coefs=[1.0] * len(ui) + [float(T - t) for _, t in yi],
        linear_vars=[u[i] for i in ui] + [y[i] for i in yi]), sense=pyo.maximize)
    # warm start from the greedy plan (HiGHS then mostly proves the bound); opts.extra
    # {"warm_start": False} switches it off
    warm = bool(opts.extra.get("warm_start", True))
    if warm:
        start = greedy_start(jobs, T, P, keep_running)
        for j in model_j:
            levels, frac = jobs[j][1], jobs[j][2]
            done = 0.0
            for t in range(T):
                qj = start[j][t]
                for q in range(len(levels)):
                    z[j, t, q].set_value(1 if q == qj else 0)
                done = min(done + (frac[qj] if qj >= 0 else 0.0), 1.0)
                u[j, t].set_value(done)
        for c in cls:
            first = [next((t for t in range(T) if start[j][t] >= 0), None) for j in classes[c]]
            for t in range(T):
                y[c, t].set_value(sum(1 for f in first if f == t))
    out.build_s = time.perf_counter() - t0

    if not model_j and not cls:  # every job is fixed: nothing to decide
        res, prim = None, {}
        out.objective = fixed_value
    else:
        res = _solve(m, opts, warm, out)
        if res is None:
            return out
        prim = res.solution_loader.get_primals()
    for j in model_j:
        tr, levels, frac, running = jobs[j]
        for t in range(T):
            pick = [q for q in range(len(levels)) if prim[z[j, t, q]] > 0.5]
            out.progress[t][tr.id] = float(prim[u[j, t]])
            if not pick:
                continue
            q = pick[0]
            if t == 0 and spare_rule == "fewest":
                # fewest nodes with the same step-1 progress (objective unchanged; see module doc)
                achieved = min(frac[q], prim[u[j, 0]])
                q = next((p for p in range(q + 1) if frac[p] >= achieved - 1e-9), q)
            out.counts[t][tr.id] = levels[q]
    for j in fixed_j:
        tid = jobs[j][0].id
        out.counts[0][tid] = jobs[j][1][0]
        for t in range(T):
            out.progress[t][tid] = 1.0
    for c in cls:
        queue = iter(classes[c])  # FCFS among interchangeable jobs
        for t in range(T):
            for _ in range(int(round(prim[y[c, t]]))):
                tid = jobs[next(queue)][0].id
                out.counts[t][tid] = c
                for tt in range(t, T):
                    out.progress[tt][tid] = 1.0
    if spare_rule == "spread":
        _spread_spare(jobs, extra, out.counts[0], P)
    out.message = f"{len(jobs)} jobs, {T} steps of {opts.step_min:g} min, pool {P}"
    return out


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    p = plan(state, opts)
    if p.status == "fallback":
        counts = keep_current(state, pow2=True)  # powers of two within the bounds and the pool
        return AllocResult(NAME, counts, counts_to_map(state, counts), 0.0, "fallback", build_s=p.build_s,
                           solve_s=p.solve_s, message=p.message + "; kept current")
    counts = p.counts[0]
    return AllocResult(NAME, dict(counts), counts_to_map(state, counts), p.objective, p.status,
                       build_s=p.build_s, solve_s=p.solve_s, message=p.message)


# ---------------------------------------------------------------------------
# the paper's robustness knobs, as a workload perturbation the simulator applies


def perturb_workload(specs: list, eta_noise: float = 0.0, bug_share: float = 0.0, kill_share: float = 0.0,
                     seed: int = 0) -> list:
    """Mark Trainers for ModelArts' robustness study; returns new TrainerSpecs (specs untouched).

    Each spec gets in `meta`:
      - `eta_factor`: the ETA the allocator sees is the true remaining demand times this factor,
        drawn uniformly in [1 - eta_noise, 1 + eta_noise] once per job (eta_noise 0.2 = +-20 %);
        `eta_node_h` (when set) is scaled by it, so allocators read the noisy ETA.
      - `hang_at_frac` (bug jobs, share bug_share): the job stops making progress once this
        fraction (uniform 0.05..0.5) of its work is done, but keeps its nodes until its seen ETA
        has elapsed in node-hours (the simulator's rule; a real platform detects the hang then)
        and then leaves unfinished.
      - `kill_at_frac` (share kill_share, disjoint from bug jobs): the user kills the job once this
        fraction (uniform 0.1..0.9) of its work is done; it leaves at once, unfinished.
    Draws come from random.Random(seed) in spec order, so a seed fixes the perturbation.
    """
    if not (0 <= eta_noise < 1):
        raise ValueError("eta_noise must be in [0, 1)")
    if not (0 <= bug_share <= 1 and 0 <= kill_share <= 1 and bug_share + kill_share <= 1):
        raise ValueError("bug_share and kill_share must be in [0, 1] and sum to at most 1")
    rng = random.Random(seed)
    out = []
    for s in specs:
        factor = 1.0 + rng.uniform(-eta_noise, eta_noise) if eta_noise else 1.0
        draw = rng.random()
        hang = rng.uniform(0.05, 0.5)
        kill = rng.uniform(0.1, 0.9)
        meta = dict(s.meta)
        meta["eta_factor"] = factor
        if draw < bug_share:
            meta["hang_at_frac"] = hang
        elif draw < bug_share + kill_share:
            meta["kill_at_frac"] = kill
        eta = s.eta_node_h * factor if s.eta_node_h is not None else None
        out.append(replace(s, eta_node_h=eta, meta=meta))
    return out
