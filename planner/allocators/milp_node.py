"""`milp-node`: BFTrainer's node-level MILP as published (the faithful reference).

Variables and constraints, per Trainer j allowed to run (Pj_max) and pool node n:

    x[j,n] in {0,1}            node n serves Trainer j
    sum_j x[j,n] <= 1          one Trainer per node
    N_j = sum_n x[j,n]
    Nmin_j on_j <= N_j <= min(Nmax_j, |N|) on_j       size 0 or Nmin..Nmax (on_j binary)
    (pow2: N_j = sum_e 2^e p[j,e], sum_e p[j,e] = on_j, p binary)

No migration (a Trainer only grows, only shrinks, or stays), with g_j binary = "grows":
    sum_{n in C_j} x[j,n] >= |C_j| g_j                 grows: keeps every node it holds
    sum_{n not in C_j} x[j,n] <= (|N| - |C_j|) g_j     does not grow: takes no new node
The big-M of each row is the row's real range (|C_j| and the number of pool nodes it does not
hold). The published model used |N|+1 for both in one combined row, which caps a change at
(|N|+1)/2 nodes; here any change the pool allows is reachable.

Rescaling indicators (costs are >= 0, so the maximisation keeps them 0 unless forced):
    N_j - C_j <= (min(Nmax_j,|N|) - C_j) up_j,    C_j - N_j <= C_j down_j

Throughput: O_j(N_j) piecewise linear between measured points. HiGHS accepts no SOS2, so the
model uses the incremental ("delta") formulation, exact for non-concave curves too: breakpoints
b_0 = 0 < b_1 < ... < b_m = top, delta_i in [0,1], binaries w_i with delta_{i+1} <= w_i <= delta_i,
    N_j = sum_i (b_i - b_{i-1}) delta_i,   G_j = G_j(0) + sum_i (G_j(b_i) - G_j(b_{i-1})) delta_i
Breakpoints are where the objective's gain (T_fwd * w_j * O_j, capped at 1 for `progress`) stops
being affine over the integers, so G_j equals the true gain at every integer N_j.

    max  sum_j G_j - w_j O_j(C_j) (Rup_j up_j + Rdw_j down_j)

Time limit with the paper's fallback: the best feasible map when the limit hits (status
time-limit-feasible), else every Trainer keeps what it holds (status fallback).
"""

from __future__ import annotations

import time

import numpy as np

from planner.allocators import _pyomo
from planner.allocators.base import (
    AllocOptions,
    AllocResult,
    AllocState,
    fallback_counts,
    fcfs_eligible,
    held,
    make_result,
    throughput_weight,
)

NAME = "milp-node"
# x[j,n] binaries at most (J x |N|): 200,000 take ~0.5 GB and ~20 s to build in Pyomo, so a
# 10 x 1,000,000 fixed pool would need ~25 GB; beyond this the decision falls back at once.
MAX_BINARIES = 500_000


def gain_table(t, top: int, opts: AllocOptions) -> np.ndarray:
    """w_j * T_fwd * O_j(k) for k = 0..top (capped at 1 for `progress`)."""
    w = throughput_weight(t, opts.objective, opts.tfwd_s)
    g = opts.tfwd_s * t.curve.table(top)[: top + 1] * w
    if opts.objective == "progress":
        g = np.minimum(g, 1.0)
    return g


def breakpoints(g: np.ndarray, tol: float) -> list[int]:
    """0, every integer where g stops being affine, and the last index."""
    top = len(g) - 1
    if top <= 0:
        return [0]
    pts = [0]
    for k in range(1, top):
        if abs((g[k + 1] - g[k]) - (g[k] - g[k - 1])) > tol:
            pts.append(k)
    pts.append(top)
    return pts


def build_model(state: AllocState, opts: AllocOptions, elig, scale: float):
    import pyomo.environ as pyo  # lazy: heavy (pyomo)

    pool = sorted(state.pool)
    npool = len(pool)
    poolset = frozenset(pool)
    m = pyo.ConcreteModel()
    J = list(range(len(elig)))
    tops = [min(t.nmax, npool) for t in elig]
    cur = [frozenset(x for x in t.current if x in poolset) for t in elig]
    m.J = pyo.Set(initialize=J, ordered=True)
    m.Nd = pyo.Set(initialize=pool, ordered=True)
    m.x = pyo.Var(m.J, m.Nd, domain=pyo.Binary)
    m.on = pyo.Var(m.J, domain=pyo.Binary)
    m.g = pyo.Var(m.J, domain=pyo.Binary)
    m.up = pyo.Var(m.J, domain=pyo.Binary)
    m.down = pyo.Var(m.J, domain=pyo.Binary)
    m.node_once = pyo.Constraint(m.Nd, rule=lambda m, n: sum(m.x[j, n] for j in J) <= 1)
    m.size = pyo.Expression(m.J, rule=lambda m, j: sum(m.x[j, n] for n in pool))
    m.size_lo = pyo.Constraint(m.J, rule=lambda m, j: m.size[j] >= max(elig[j].nmin, 1) * m.on[j])
    m.size_hi = pyo.Constraint(m.J, rule=lambda m, j: m.size[j] <= tops[j] * m.on[j])

    def keep_rule(m, j):
        if not cur[j]:
            return pyo.Constraint.Skip
        return sum(m.x[j, n] for n in sorted(cur[j])) >= len(cur[j]) * m.g[j]

    def nonew_rule(m, j):
        if len(cur[j]) == npool:
            return pyo.Constraint.Skip
        return sum(m.x[j, n] for n in pool if n not in cur[j]) <= (npool - len(cur[j])) * m.g[j]

    m.keep_all = pyo.Constraint(m.J, rule=keep_rule)
    m.no_new = pyo.Constraint(m.J, rule=nonew_rule)
    m.up_def = pyo.Constraint(
        m.J, rule=lambda m, j: m.size[j] - len(cur[j]) <= max(tops[j] - len(cur[j]), 0) * m.up[j])
    m.down_def = pyo.Constraint(
        m.J, rule=lambda m, j: len(cur[j]) - m.size[j] <= len(cur[j]) * m.down[j])

    if opts.pow2:
        pw = {j: [1 << e for e in range(tops[j].bit_length()) if max(elig[j].nmin, 1) <= (1 << e) <= tops[j]]
              for j in J}
        m.PW = pyo.Set(initialize=[(j, p) for j in J for p in pw[j]], dimen=2, ordered=True)
        m.p = pyo.Var(m.PW, domain=pyo.Binary)
        m.pow_size = pyo.Constraint(m.J, rule=lambda m, j: m.size[j] == sum(p * m.p[j, p] for p in pw[j]))
        m.pow_one = pyo.Constraint(m.J, rule=lambda m, j: sum(m.p[j, p] for p in pw[j]) == m.on[j])

    # incremental piecewise-linear gain
    segs = []  # (j, i, length, dgain)
    for j in J:
        g = gain_table(elig[j], tops[j], opts) / scale
        bp = breakpoints(g, 1e-9)
        for i in range(1, len(bp)):
            segs.append((j, i, bp[i] - bp[i - 1], float(g[bp[i]] - g[bp[i - 1]])))
    seg_of = {j: [s for s in segs if s[0] == j] for j in J}
    m.S = pyo.Set(initialize=[(s[0], s[1]) for s in segs], dimen=2, ordered=True)
    m.delta = pyo.Var(m.S, bounds=(0.0, 1.0))
    inner = [(s[0], s[1]) for s in segs if s[1] < len(seg_of[s[0]])]
    m.W = pyo.Set(initialize=inner, dimen=2, ordered=True)
    m.w = pyo.Var(m.W, domain=pyo.Binary)
    m.fill_a = pyo.Constraint(m.W, rule=lambda m, j, i: m.delta[j, i + 1] <= m.w[j, i])
    m.fill_b = pyo.Constraint(m.W, rule=lambda m, j, i: m.w[j, i] <= m.delta[j, i])
    m.pwl = pyo.Constraint(m.J, rule=lambda m, j: m.size[j] == sum(s[2] * m.delta[s[0], s[1]] for s in seg_of[j])
                           if seg_of[j] else pyo.Constraint.Skip)

    def obj_rule(m):
        gain = sum(s[3] * m.delta[s[0], s[1]] for s in segs)
        cost = 0
        for j in J:
            t = elig[j]
            c = len(cur[j])
            o_now = float(t.curve.table(c)[c]) * throughput_weight(t, opts.objective, opts.tfwd_s) / scale
            if o_now:
                cost = cost + o_now * (t.rup_s * m.up[j] + t.rdw_s * m.down[j])
        return gain - cost

    m.obj = pyo.Objective(rule=obj_rule, sense=pyo.maximize)
    return m, pool, cur


def _map_from(m, elig, pool) -> dict[str, tuple[int, ...]]:
    out = {}
    for j, t in enumerate(elig):
        out[t.id] = tuple(n for n in pool if (m.x[j, n].value or 0.0) > 0.5)
    return out


def _no_migration(node_map, elig, cur) -> bool:
    for j, t in enumerate(elig):
        mine = set(node_map[t.id])
        if not (mine >= cur[j] or mine <= cur[j]):
            return False
    return True


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    t0 = time.perf_counter()
    elig, _ = fcfs_eligible(state, opts.pj_max)
    poolset = state.pool_set
    npool = len(poolset)
    runnable = [t for t in elig if max(t.nmin, 1) <= min(t.nmax, npool)]
    if not runnable:
        return make_result(NAME, state, {}, opts, "optimal", build_s=time.perf_counter() - t0)
    if len(runnable) * npool > MAX_BINARIES:  # the model alone would take many GB (and minutes to build)
        counts = fallback_counts(state, opts)
        return make_result(NAME, state, counts, opts, "fallback", time.perf_counter() - t0, 0.0,
                           f"model too large: {len(runnable)} Trainers x {npool} nodes > {MAX_BINARIES:,} "
                           "binaries; milp or dp give the same optimum")
    scale = 1.0
    for t in runnable:
        top = min(t.nmax, npool)
        g = gain_table(t, top, opts)
        c = held(t, poolset)
        o_now = float(t.curve.table(c)[c]) * throughput_weight(t, opts.objective, opts.tfwd_s)
        scale = max(scale, float(np.max(np.abs(g))), o_now * max(t.rup_s, t.rdw_s))
    m, pool, cur = build_model(state, opts, runnable, scale)
    t1 = time.perf_counter()
    out = _pyomo.solve(m, opts.time_limit_s, opts.mip_gap)
    t2 = time.perf_counter()
    if out.has_solution:
        node_map = _map_from(m, runnable, pool)
        counts = {tid: len(v) for tid, v in node_map.items()}
        full_map = {t.id: node_map.get(t.id, ()) for t in state.trainers}
        ok = all(k == 0 or max(t.nmin, 1) <= k <= t.nmax for t in runnable for k in [counts[t.id]])
        ok = ok and sum(counts.values()) <= npool and _no_migration(node_map, runnable, cur)
        used = [n for v in node_map.values() for n in v]
        ok = ok and len(used) == len(set(used))
        if ok:
            return make_result(NAME, state, counts, opts, out.status, t1 - t0, t2 - t1, out.message,
                               node_map=full_map)
        out.message = "solver values violate a constraint after rounding"
    counts = fallback_counts(state, opts)
    return make_result(NAME, state, counts, opts, "fallback", t1 - t0, t2 - t1, out.message)
