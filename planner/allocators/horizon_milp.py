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
    (15)      with opts.extra["min_every_step"]: ModelArts' constraint (15), n_i^t >= n_i,min for
              every job i and every step t ("This constraint allows nodes not return back to zero
              after a job has finished training", Sec. 4.3): every job in the model holds at least
              its lowest level at every step, waiting or running, finished or not. The jobs whose
              lowest levels fit the pool, FCFS (running ones first), form the model's job set; the
              others get no nodes in this decision. Aggregation and fixing are off then (they
              assume a job may drop to 0). Off by default.
              Readings of (15) apart (planner.studies.modelarts' one-change experiments), each in
              opts.extra: "min_every_step": "running" holds only the jobs running now at their
              minimum every step (waiting jobs in the set may stay at 0); "min_release": True holds
              a job only while its demand is not served, sum_k z[i,t,k] >= 1 - u[i,t-1] (the
              paper's (9)-(10) with (11)'s release, what (15) replaced); "min_job_set": "running"
              makes the job set the running jobs only (Sec. 2: the allocator "makes decisions on
              scaling-up or scaling-down an active training job"; queued jobs start on idle nodes);
              "min_job_set": "all" puts every active job in the model (Sec. 2: "It has access to all
              active jobs (queueing or training)"), (15) holding only those of the FCFS set above
              (the others may stay at 0).
    form      opts.extra["formulation"]: "indicator" (default, the above) or "paper": the paper's own
              (16)-(20) (an integer n[i,t] and two big-M binaries per power of two, every level kept),
              over (15)'s set only (_build_paper_model); the same optimum, a larger and weaker model.
              opts.extra["solver"]: "highs" (default, in process) or "cbc" (the paper's solver, Sec. 4.4,
              through files: Pyomo writes an LP file, runs the `cbc` program, reads its solution).
              Both for the study's decision-time experiments only (scripts/modelarts_decision_time.py).
    maximise  sum_i sum_t u[i,t]            (= the paper's sum_i sum_t s_i^t / d_i)
              [+ sum_i sum_k (1 - d_i / r_i(k)) z[i,1,k] over the levels k that finish job i
               inside step 1, with opts.extra["early_finish"]: the share of the first step left
               after the job is done, so that finishing sooner inside a step counts. It is not
               only a tie-break: u is fractional, so the bonus can change the optimum of the
               paper's objective; an option, off by default]

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

Only the first step is applied: counts = step-1 levels. AllocResult.objective is BFTrainer's
objective of those counts (base.objective_of, the unit of every allocator, so it compares with
dp's optimum); the plan's own objective (sum of u) is AllocResult.details["plan_objective"].
Step-1 nodes the plan leaves unused (no job gains from them at step granularity) follow
opts.extra["spare_nodes"]: "spread" (default: doubling the slowest-to-finish running job while
they allow; the plan's objective is unchanged), "fewest" (each job on the fewest nodes with the
same step-1 progress) or "none". The node map comes from base.counts_to_map (no migration).
Fallback (status "fallback"): when HiGHS finds no feasible point within the time limit, every
Trainer keeps what it holds (base.keep_current with pow2: powers of two within the bounds and
the pool). HiGHS runs through the shared Pyomo path (planner.allocators._pyomo.solve, with the
greedy plan as MIP start).

The paper's robustness knobs (ETA noise, bug jobs, killed jobs) are a workload perturbation:
planner.workload.generators.perturb_workload.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field

import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from planner.allocators import _pyomo
from planner.allocators._pyomo import FAST_OPTIONS
from planner.allocators.base import (
    SPEED_RULES,
    AllocOptions,
    AllocResult,
    AllocState,
    TrainerState,
    fcfs_eligible,
    keep_current,
    make_result,
)

NAME = "horizon-milp"
SPARE_RULES = ("spread", "fewest", "none")
# constraint (15)'s readings (module docstring): whom it holds, and the model's job set under it
MIN_EVERY_STEP = (True, "running")
MIN_JOB_SETS = ("fit", "running", "all")
# the decision-time experiments' options (opts.extra; module docstring): the solver, the model's form
SOLVERS = ("highs", "cbc")
FORMULATIONS = ("indicator", "paper")
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


def greedy_start(jobs: list, T: int, P: int, keep_running: bool, forced=frozenset()) -> list[list[int]]:
    """A feasible plan to warm-start HiGHS: level index per job and step (-1 = no nodes).

    Step by step: running jobs that still need work take their lowest level (when the model
    keeps running jobs; the `forced` ones always, constraint (15)), then nodes go one
    level-upgrade at a time to the best progress gain per added node. Feasible by construction.
    """
    rem = [1.0] * len(jobs)
    plan_q = [[-1] * T for _ in jobs]
    for t in range(T):
        free = P
        q = [-1] * len(jobs)
        for j, (_, levels, _frac, running) in enumerate(jobs):
            if j in forced or (running and keep_running and rem[j] > 1e-12):
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


def _solve(m, opts: AllocOptions, warm: bool, out: HorizonPlan) -> bool:
    """HiGHS on the model (planner.allocators._pyomo.solve; values loaded into the model); sets
    out.solve_s/status/objective/message. False when there is no plan (fallback). With
    opts.extra["solver"] "cbc": CBC through files instead (_solve_cbc)."""
    solver = str(opts.extra.get("solver", "highs"))
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    if solver == "cbc":
        return _solve_cbc(m, opts, warm, out)
    oc = _pyomo.solve(m, opts.time_limit_s, opts.mip_gap,
                      solver_options={**HIGHS_OPTIONS, **dict(opts.extra.get("highs_options", {}))},
                      warm_start=warm, optimal_abs_tol=1e-9)
    out.solve_s = oc.solve_s
    out.status = oc.status
    if not oc.has_solution:
        out.message = oc.message
        return False
    out.objective = float(oc.objective)
    return True


def _solve_cbc(m, opts: AllocOptions, warm: bool, out: HorizonPlan) -> bool:
    """CBC (the paper's solver, Sec. 4.4) as a modelling layer drives it: Pyomo writes the model to
    an LP file, runs the `cbc` program on it (one thread, opts.mip_gap as ratioGap, opts.time_limit_s,
    B&B nodes capped by highs_options' mip_max_nodes when given, the model's values as a MIP start
    when warm) and reads its solution file back. For the study's decision-time experiments only."""
    t0 = time.perf_counter()
    options = {"threads": 1, "ratioGap": max(float(opts.mip_gap), 0.0), "sec": max(float(opts.time_limit_s), 1.0)}
    cap = dict(opts.extra.get("highs_options", {})).get("mip_max_nodes")
    if cap is not None:
        options["maxNodes"] = int(cap)
    try:
        sf = pyo.SolverFactory("cbc")
        res = sf.solve(m, options=options, warmstart=warm, load_solutions=False)
    except Exception as e:  # CBC missing or failed: the caller falls back
        out.solve_s, out.status = time.perf_counter() - t0, "fallback"
        out.message = f"cbc raised {type(e).__name__}: {' '.join(str(e).split())[:200]}"
        return False
    out.solve_s = time.perf_counter() - t0
    tc = str(res.solver.termination_condition)
    if len(res.solution) == 0:
        out.status, out.message = "fallback", f"cbc: no solution ({tc})"
        return False
    m.solutions.load_from(res)
    out.status = "optimal" if tc == "optimal" else "time-limit-feasible"
    out.objective = float(pyo.value(m.obj))
    out.message = f"cbc: {tc}"
    return True


@dataclass
class _Jobs:
    """The jobs of one decision as the model sees them, and how the exact reductions split them."""

    jobs: list  # (trainer, levels, progress fractions r/d clipped at 1, running)
    extra: list  # (every pow2 level that fits, unclipped r/d): for the spare-node rule
    keep_running: bool = True
    classes: dict = field(default_factory=dict)  # level k -> waiting one-step jobs (FCFS order)
    model_j: list = field(default_factory=list)  # jobs with binaries
    fixed_j: list = field(default_factory=list)  # running one-step jobs fixed at their lowest level
    forced: frozenset = frozenset()  # constraint (15): jobs held at >= their lowest level every step
    release: bool = False  # (15) holds a forced job only while its demand is not served

    @property
    def fixed_nodes(self) -> int:
        return sum(self.jobs[j][1][0] for j in self.fixed_j)


def _jobs_of(state: AllocState, opts: AllocOptions, P: int, early_finish: bool = False) -> _Jobs:
    """Jobs that enter the model: some level fits and some demand remains. With early_finish
    every level is kept (finishing sooner inside a step has a value then)."""
    eligible, _ = fcfs_eligible(state, opts.pj_max)
    jobs, extra = [], []
    poolset = state.pool_set
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
        if 1.0 in frac and not early_finish:
            cut = frac.index(1.0) + 1
            levels, frac = levels[:cut], frac[:cut]
        running = any(x in poolset for x in t.current)
        jobs.append((t, levels, frac, running))
        extra.append((all_levels, raw))
    return _Jobs(jobs, extra)


def _split(js: _Jobs, P: int, aggregate: bool) -> None:
    """The exact reductions: aggregation classes, jobs fixed in step 1, and the rest (model_j).

    Waiting jobs that finish inside one step on their lowest level are interchangeable when they
    share that level k (each is worth T - t if started in step t, and nothing after), so one
    integer y[c,t] (how many of class c start in step t) replaces their binaries; which of them
    start is decided FCFS. opts.extra {"aggregate": False} keeps one binary per job and step.
    Likewise a running job (kept running) that finishes inside step 1 on its lowest level takes
    that level in step 1 and has nothing left to gain after: fixed, not modelled.
    """
    js.keep_running = sum(levels[0] for _, levels, _, running in js.jobs if running) <= P
    for j, (_, levels, frac, running) in enumerate(js.jobs):
        if aggregate and len(levels) == 1 and frac[0] >= 1.0:
            if not running:
                js.classes.setdefault(levels[0], []).append(j)
            elif js.keep_running:
                js.fixed_j.append(j)
            else:
                js.model_j.append(j)
        else:
            js.model_j.append(j)
    for members in js.classes.values():
        members.sort(key=lambda j: (js.jobs[j][0].submit_s, j))


def _apply_min_every_step(js: _Jobs, P: int, which=True, job_set: str = "fit", release: bool = False) -> None:
    """Constraint (15): the jobs whose lowest levels fit P, FCFS (running first), each forced to
    hold at least that level at every step; the others leave the model (no nodes now).
    which "running": only the running ones are forced; job_set "running": only running jobs form
    the set; release: a forced job is held only until its demand is served (module docstring)."""
    if which not in MIN_EVERY_STEP:
        raise ValueError(f"unknown min_every_step {which!r}; choose one of {', '.join(map(str, MIN_EVERY_STEP))}")
    if job_set not in MIN_JOB_SETS:
        raise ValueError(f"unknown min_job_set {job_set!r}; choose one of {', '.join(MIN_JOB_SETS)}")
    order = sorted(range(len(js.jobs)), key=lambda j: (0 if js.jobs[j][3] else 1, js.jobs[j][0].submit_s, j))
    fit, used = set(), 0
    for j in order:
        lo = js.jobs[j][1][0]
        if job_set == "running" and not js.jobs[j][3]:
            continue
        if used + lo <= P:
            fit.add(j)
            used += lo
    keep = list(range(len(js.jobs))) if job_set == "all" else sorted(fit)
    forced = [i for i, j in enumerate(keep) if j in fit and (which != "running" or js.jobs[j][3])]
    js.jobs = [js.jobs[j] for j in keep]
    js.extra = [js.extra[j] for j in keep]
    js.forced = frozenset(forced)
    js.release = bool(release)


def _build_model(js: _Jobs, T: int, P: int, early_finish: bool = False):
    """The Pyomo model of the module docstring over the reduced jobs."""
    jobs, model_j, cls = js.jobs, js.model_j, sorted(js.classes)
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
            y[c, t].setub(len(js.classes[c]))
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
            if j in js.forced and not (js.release and t > 0):
                add(LinearExpression(linear_coefs=[1.0] * nq, linear_vars=zs) >= 1)
            elif j in js.forced:  # (15) released once the demand is served: >= 1 - u[t-1]
                add(LinearExpression(linear_coefs=[1.0] * nq + [1.0], linear_vars=zs + [u[j, t - 1]]) >= 1)
            elif running and js.keep_running:
                if t == 0:
                    add(LinearExpression(linear_coefs=[1.0] * nq, linear_vars=zs) >= 1)
                else:
                    add(LinearExpression(linear_coefs=[1.0] * nq + [1.0], linear_vars=zs + [u[j, t - 1]]) >= 1)
    for c in cls:
        if T > 1:
            add(LinearExpression(linear_coefs=[1.0] * T, linear_vars=[y[c, t] for t in range(T)])
                <= len(js.classes[c]))
    fixed_nodes = js.fixed_nodes
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
    bonus = _early_bonus(js) if early_finish else {}
    m.obj = pyo.Objective(expr=LinearExpression(
        constant=float(T * len(js.fixed_j)),
        linear_coefs=[1.0] * len(ui) + [float(T - t) for _, t in yi] + list(bonus.values()),
        linear_vars=[u[i] for i in ui] + [y[i] for i in yi] + [z[j, 0, q] for j, q in bonus]),
        sense=pyo.maximize)
    return m


def _build_paper_model(js: _Jobs, T: int, P: int, big_m: float | None = None):
    """The paper's own MILP (Sec. 4.4, (15)-(20)) over the jobs of (15)'s set, in our units (u = s/d):
    an integer node count n[j,t] in [Nmin, Nmax], and per power of two k in K (every level that
    fits, not cut at the first that finishes the job) two binaries with big-M bounds, (16)
    (1 - dm)/M - M dm <= n - k <= M (1 - dm) (dm = 1 iff n <= k), (17) the same for k - n (dp = 1
    iff n >= k), (18) sum_k dm + dp = |K| + 1 (n is in K), progress (19)-(20)
    u[t] <= u[t-1] + sum_k r_k/d (dm + dp - 1); capacity sum_j n[j,t] <= P; (15) by n's lower
    bound. M = the job's largest level (|n - k| < M; the smallest valid), or `big_m` when given (the
    paper: "a sufficiently-large number M"; opts.extra["big_m"]). Every job of the model must be held by (15)
    (K has no 0 level): opts.extra "formulation": "paper" needs "min_every_step": True."""
    model_j = js.model_j
    if any(j not in js.forced for j in model_j) or js.classes or js.fixed_j or js.release:
        raise ValueError("formulation 'paper' needs every job of the model held by (15) (min_every_step True, "
                         "min_job_set 'fit', no release)")
    levels = {j: js.extra[j][0] for j in model_j}
    frac = {j: [min(x, 1.0) for x in js.extra[j][1]] for j in model_j}
    m = pyo.ConcreteModel()
    ni = [(j, t) for j in model_j for t in range(T)]
    di = [(j, t, q) for j in model_j for t in range(T) for q in range(len(levels[j]))]
    m.n = pyo.Var(ni, domain=pyo.Integers, dense=True)
    m.dm = pyo.Var(di, domain=pyo.Binary, dense=True)
    m.dp = pyo.Var(di, domain=pyo.Binary, dense=True)
    m.u = pyo.Var(ni, bounds=(0.0, 1.0), dense=True)
    n, dm, dp, u = m.n, m.dm, m.dp, m.u
    m.c = pyo.ConstraintList()
    add = m.c.add
    for j in model_j:
        lv, fr = levels[j], frac[j]
        big = float(big_m) if big_m else float(max(lv))
        if big < max(lv) - 1:
            raise ValueError(f"big_m {big_m} is below a job's largest level minus 1 ({max(lv) - 1})")
        for t in range(T):
            n[j, t].setlb(lv[0])  # (15)
            n[j, t].setub(lv[-1])  # n <= n_i,max (and the pool)
            x = n[j, t]
            for q, k in enumerate(lv):
                a, b = dm[j, t, q], dp[j, t, q]
                # (16): (1 - dm)/M - M dm <= n - k <= M (1 - dm), as n + M dm <= k + M and
                # n + (1/M + M) dm >= k + 1/M
                add(LinearExpression(linear_coefs=[1.0, big], linear_vars=[x, a]) <= k + big)
                add(LinearExpression(linear_coefs=[1.0, 1.0 / big + big], linear_vars=[x, a]) >= k + 1.0 / big)
                # (17): the same for k - n with dp: -n + M dp <= M - k and -n + (1/M + M) dp >= 1/M - k
                add(LinearExpression(linear_coefs=[-1.0, big], linear_vars=[x, b]) <= big - k)
                add(LinearExpression(linear_coefs=[-1.0, 1.0 / big + big], linear_vars=[x, b]) >= 1.0 / big - k)
            nq = len(lv)
            ds = [dm[j, t, q] for q in range(nq)] + [dp[j, t, q] for q in range(nq)]
            add(LinearExpression(linear_coefs=[1.0] * (2 * nq), linear_vars=ds) == nq + 1)  # (18)
            # (19)-(20): u[t] - u[t-1] - sum_k f_k (dm + dp) <= -sum_k f_k
            coefs, vs = [1.0], [u[j, t]]
            if t > 0:
                coefs.append(-1.0)
                vs.append(u[j, t - 1])
            add(LinearExpression(linear_coefs=coefs + [-f for f in fr] * 2, linear_vars=vs + ds) <= -sum(fr))
    for t in range(T):
        add(LinearExpression(linear_coefs=[1.0] * len(model_j), linear_vars=[n[j, t] for j in model_j]) <= P)
    m.obj = pyo.Objective(expr=LinearExpression(linear_coefs=[1.0] * len(ni), linear_vars=[u[i] for i in ni]),
                          sense=pyo.maximize)
    return m


def _set_paper_warm_start(m, js: _Jobs, T: int, P: int) -> None:
    """The greedy plan as the paper model's values (n, its two binaries per level, u)."""
    start = greedy_start(js.jobs, T, P, js.keep_running, js.forced)
    for j in js.model_j:
        lv, raw = js.extra[j]
        cut = js.jobs[j][1]
        done = 0.0
        for t in range(T):
            k = cut[max(start[j][t], 0)]
            m.n[j, t].set_value(k)
            for q, kk in enumerate(lv):
                m.dm[j, t, q].set_value(1 if k <= kk else 0)
                m.dp[j, t, q].set_value(1 if k >= kk else 0)
            done = min(done + min(raw[lv.index(k)], 1.0), 1.0)
            m.u[j, t].set_value(done)


def _read_paper_plan(m, js: _Jobs, out: HorizonPlan) -> None:
    for j in js.model_j:
        tid = js.jobs[j][0].id
        for t in range(out.steps):
            out.counts[t][tid] = int(round(m.n[j, t].value))
            out.progress[t][tid] = float(m.u[j, t].value)


def _early_bonus(js: _Jobs) -> dict[tuple[int, int], float]:
    """(job, level index) -> 1 - d/r(k) for the step-1 levels that finish the job inside the step
    (the unused share of the step; raw = r/d, every level kept when early_finish is on)."""
    out = {}
    for j in js.model_j:
        _, raw = js.extra[j]
        for q, x in enumerate(raw[:len(js.jobs[j][1])]):
            if x >= 1.0:
                out[(j, q)] = 1.0 - 1.0 / x
    return out


def _set_warm_start(m, js: _Jobs, T: int, P: int) -> None:
    """The greedy plan as the model's variable values (HiGHS' MIP start)."""
    start = greedy_start(js.jobs, T, P, js.keep_running, js.forced)
    z, u, y = m.z, m.u, m.y
    for j in js.model_j:
        levels, frac = js.jobs[j][1], js.jobs[j][2]
        done = 0.0
        for t in range(T):
            qj = start[j][t]
            for q in range(len(levels)):
                z[j, t, q].set_value(1 if q == qj else 0)
            done = min(done + (frac[qj] if qj >= 0 else 0.0), 1.0)
            u[j, t].set_value(done)
    for c, members in js.classes.items():
        first = [next((t for t in range(T) if start[j][t] >= 0), None) for j in members]
        for t in range(T):
            y[c, t].set_value(sum(1 for f in first if f == t))


def _read_plan(m, js: _Jobs, out: HorizonPlan, spare_rule: str) -> None:
    """Counts and progress per step from the solved model's values into `out`."""
    T, jobs = out.steps, js.jobs
    for j in js.model_j:
        tr, levels, frac, running = jobs[j]
        for t in range(T):
            pick = [q for q in range(len(levels)) if m.z[j, t, q].value > 0.5]
            out.progress[t][tr.id] = float(m.u[j, t].value)
            if not pick:
                continue
            q = pick[0]
            if t == 0 and spare_rule == "fewest":
                # fewest nodes with the same step-1 progress (objective unchanged; see module doc)
                achieved = min(frac[q], m.u[j, 0].value)
                q = next((p for p in range(q + 1) if frac[p] >= achieved - 1e-9), q)
            out.counts[t][tr.id] = levels[q]
    for j in js.fixed_j:
        tid = jobs[j][0].id
        out.counts[0][tid] = jobs[j][1][0]
        for t in range(T):
            out.progress[t][tid] = 1.0
    for c in sorted(js.classes):
        queue = iter(js.classes[c])  # FCFS among interchangeable jobs
        for t in range(T):
            for _ in range(int(round(m.y[c, t].value))):
                tid = jobs[next(queue)][0].id
                out.counts[t][tid] = c
                for tt in range(t, T):
                    out.progress[tt][tid] = 1.0


def plan(state: AllocState, opts: AllocOptions) -> HorizonPlan:
    """Build and solve the horizon model; counts per step for every Trainer in `state`."""
    t0 = time.perf_counter()
    P = len(state.pool)
    T = max(int(opts.horizon_steps), 1)
    if opts.speed_rule not in SPEED_RULES:
        raise ValueError(f"unknown speed rule {opts.speed_rule!r}; choose one of {', '.join(SPEED_RULES)}")
    spare_rule = str(opts.extra.get("spare_nodes", "spread"))
    if spare_rule not in SPARE_RULES:
        raise ValueError(f"unknown spare_nodes rule {spare_rule!r}; choose one of {', '.join(SPARE_RULES)}")
    early = bool(opts.extra.get("early_finish", False))
    c15 = opts.extra.get("min_every_step", False)
    min_every_step = bool(c15)
    js = _jobs_of(state, opts, P, early)
    if min_every_step:
        _apply_min_every_step(js, P, c15, str(opts.extra.get("min_job_set", "fit")),
                              bool(opts.extra.get("min_release", False)))
    out = HorizonPlan(steps=T, step_min=float(opts.step_min), pool_nodes=P,
                      counts=[{t.id: 0 for t in state.trainers} for _ in range(T)],
                      progress=[{t.id: 0.0 for t in state.trainers} for _ in range(T)])
    if not js.jobs:
        out.build_s = time.perf_counter() - t0
        out.message = "no job can run"
        return out
    # the aggregation and fixing reductions assume finishing anywhere inside a step is worth the
    # same: not with early_finish
    _split(js, P, bool(opts.extra.get("aggregate", True)) and not early and not min_every_step)
    out.keep_running = js.keep_running
    formulation = str(opts.extra.get("formulation", "indicator"))
    if formulation not in FORMULATIONS:
        raise ValueError(f"unknown formulation {formulation!r}; choose one of {', '.join(FORMULATIONS)}")
    paper = formulation == "paper"
    m = _build_paper_model(js, T, P, opts.extra.get("big_m")) if paper else _build_model(js, T, P, early)
    # warm start from the greedy plan (HiGHS then mostly proves the bound); opts.extra
    # {"warm_start": False} switches it off
    warm = bool(opts.extra.get("warm_start", True))
    if warm:
        (_set_paper_warm_start if paper else _set_warm_start)(m, js, T, P)
    out.build_s = time.perf_counter() - t0
    if not js.model_j and not js.classes:  # every job is fixed: nothing to decide
        out.objective = float(T * len(js.fixed_j))
    elif not _solve(m, opts, warm, out):
        return out
    if paper:
        _read_paper_plan(m, js, out)
    else:
        _read_plan(m, js, out, spare_rule)
    if spare_rule == "spread":
        _spread_spare(js.jobs, js.extra, out.counts[0], P)
    out.message = f"{len(js.jobs)} jobs, {T} steps of {opts.step_min:g} min, pool {P}"
    return out


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    """Step 1 of the plan; objective = BFTrainer's objective of its counts (plan's in details)."""
    p = plan(state, opts)
    details = {"plan_objective": p.objective, "plan_steps": p.steps, "step_min": p.step_min,
               "plan_counts": p.counts}
    if p.status == "fallback":
        counts = keep_current(state, pow2=True)  # powers of two within the bounds and the pool
        return make_result(NAME, state, counts, opts, "fallback", build_s=p.build_s, solve_s=p.solve_s,
                           message=p.message + "; kept current", details={**details, "plan_objective": None})
    return make_result(NAME, state, dict(p.counts[0]), opts, p.status, build_s=p.build_s, solve_s=p.solve_s,
                       message=p.message, details=details)
