"""`milp`: the exact count-level MILP (Pyomo + HiGHS), then counts back to a node map.

The same multiple-choice knapsack as `dp` (one level per Trainer, total <= |N|), written as a
small MILP. A Trainer's value v_j(k) (base.level_tables) is affine between the breakpoints of its
scaling curve and on each side of its current size C_j, so its allowed levels split into a few
segments [a_s, b_s] on which v_j(k) = alpha_s + beta_s k. The model is the disjunctive
(convex-hull) formulation of "level 0 or one segment":

    z[j,s] binary (segment s chosen), n[j,s] integer,  a_s z[j,s] <= n[j,s] <= b_s z[j,s]
    sum_s z[j,s] <= 1                           (no segment: level 0)
    (identical Trainers are one group: z counts them, see build_model)
    sum_{j,s} n[j,s] <= |N|
    max sum_j v_j(0) + sum_{j,s} (alpha_s - v_j(0)) z[j,s] + beta_s n[j,s]

Single-level segments (a_s = b_s, e.g. with pow2) need no n: they add a_s z[j,s] nodes. It is
exact for any curve (a curve that is nowhere affine gives one segment per level, i.e. the plain
one-binary-per-level model) and much smaller than one binary per level: ~7 segments instead of
64 levels per ShuffleNet Trainer. The objective is scaled by 1 / max|v| for HiGHS.

MIP start: by default the model's variables are set to the `dp` solution of the same levels and
values (dp.solve_levels) and HiGHS gets it as its first incumbent (_pyomo.solve(warm_start=True)).
HiGHS still runs its full branch and bound: it checks the start, and must prove that no count
vector is better by more than the gap (it would replace the start if one were). Without the start
its time goes into finding that optimum and closing the root gap (~1e-4) to 1e-6; with it the
bound closes much sooner (see docs/allocators.md). `opts.extra["warm_start"] = False` solves cold:
an independent cross-check of dp that does not see its answer.
"""

from __future__ import annotations

import time

import numpy as np

from planner.allocators import _pyomo
from planner.allocators.base import (
    AllocOptions,
    AllocResult,
    AllocState,
    MemoryBudget,
    check_memory,
    fallback_counts,
    is_feasible,
    level_tables,
    make_result,
)
from planner.allocators.dp import solve_levels

NAME = "milp"


def segments(levels: np.ndarray, values: np.ndarray, tol: float) -> list[tuple[int, int, float, float]]:
    """Maximal runs of consecutive non-zero levels on which values are affine: (a, b, alpha, beta)."""
    out = []
    n = len(levels)
    i = 1
    while i < n:
        j = i
        while j + 1 < n and levels[j + 1] == levels[j] + 1:
            if j > i and abs((values[j + 1] - values[j]) - (values[j] - values[j - 1])) > tol:
                break
            j += 1
        a, b = int(levels[i]), int(levels[j])
        beta = float((values[j] - values[i]) / (b - a)) if b > a else 0.0
        out.append((a, b, float(values[i]) - beta * a, beta))
        i = j + 1
    return out


def groups_of(items) -> list[list[int]]:
    """Indices of items with identical levels and values (interchangeable Trainers), in order."""
    seen: dict = {}
    for j, (_t, lv, v) in enumerate(items):
        seen.setdefault((np.asarray(lv).tobytes(), np.asarray(v, dtype=float).tobytes()), []).append(j)
    return list(seen.values())


def build_model(cap: int, items, scale: float):
    """The Pyomo model over groups of identical Trainers.

    Identical Trainers (same levels and values, e.g. all new Trainers of one model) form one
    group of size m: z[g,s] counts how many of them use segment s (0..m) and n[g,s] their nodes,
    a_s z <= n <= b_s z, sum_s z[g,s] <= m. Any such (z, n) splits into per-Trainer levels
    within [a_s, b_s] of equal total value, so this is exact, and it removes the symmetry that
    makes branch and bound enumerate permutations of identical Trainers.
    Returns (model, keys, info, ranged keys, groups).
    """
    import pyomo.environ as pyo  # lazy: heavy (pyomo)

    groups = groups_of(items)
    segs = []  # (g, s, a, b, alpha, beta)
    v0 = []
    for g, members in enumerate(groups):
        _t, lv, v = items[members[0]]
        vs = np.asarray(v, dtype=float) / scale
        v0.append(float(vs[0]))
        for s, (a, b, al, be) in enumerate(segments(lv, vs, 1e-9)):
            segs.append((g, s, a, b, al, be))
    size = [len(mb) for mb in groups]
    m = pyo.ConcreteModel()
    keys = [(x[0], x[1]) for x in segs]
    info = {(x[0], x[1]): x for x in segs}
    ranged = [k for k in keys if info[k][2] < info[k][3]]
    rset = set(ranged)
    m.S = pyo.Set(initialize=keys, dimen=2, ordered=True)
    m.R = pyo.Set(initialize=ranged, dimen=2, ordered=True)
    m.z = pyo.Var(m.S, domain=pyo.NonNegativeIntegers, bounds=lambda m, g, s: (0, size[g]))
    m.n = pyo.Var(m.R, domain=pyo.NonNegativeIntegers,
                  bounds=lambda m, g, s: (0, min(info[g, s][3] * size[g], cap)))
    m.lo = pyo.Constraint(m.R, rule=lambda m, g, s: m.n[g, s] >= info[g, s][2] * m.z[g, s])
    m.hi = pyo.Constraint(m.R, rule=lambda m, g, s: m.n[g, s] <= info[g, s][3] * m.z[g, s])
    by_g: dict[int, list] = {}
    for k in keys:
        by_g.setdefault(k[0], []).append(k)
    m.G = pyo.Set(initialize=sorted(by_g), ordered=True)
    m.one = pyo.Constraint(m.G, rule=lambda m, g: sum(m.z[k] for k in by_g[g]) <= size[g])
    m.cap = pyo.Constraint(expr=sum(m.n[k] if k in rset else info[k][2] * m.z[k] for k in keys) <= cap)
    m.obj = pyo.Objective(
        expr=sum(v0[g] * size[g] for g in range(len(groups)))
        + sum((info[k][4] - v0[k[0]]) * m.z[k]
              + (info[k][5] * m.n[k] if k in rset else info[k][5] * info[k][2] * m.z[k])
              for k in keys),
        sense=pyo.maximize,
    )
    return m, keys, info, rset, groups


def counts_from(m, keys, info, rset, items, groups) -> dict[str, int]:
    """Split each group's (z, n) per segment into per-Trainer levels, members in order."""
    counts = {t.id: 0 for t, _, _ in items}
    for g, members in enumerate(groups):
        free = list(members)
        for k in keys:
            if k[0] != g:
                continue
            z = int(round(m.z[k].value or 0.0))
            if z <= 0:
                continue
            a, b = info[k][2], info[k][3]
            left = int(round(m.n[k].value)) - a * z if k in rset else 0
            take, free = free[:z], free[z:]
            for j in take:
                extra = min(b - a, max(left, 0))
                left -= extra
                counts[items[j][0].id] = a + extra
    return counts


def set_start(m, keys, info, rset, items, groups, levels: list[int]) -> None:
    """Write a count vector (one level per item) into the model's variables as a MIP start."""
    for k in keys:
        m.z[k].set_value(0)
    for k in rset:
        m.n[k].set_value(0)
    by_g: dict[int, list] = {}
    for k in keys:
        by_g.setdefault(k[0], []).append(k)
    for g, members in enumerate(groups):
        for j in members:
            lvl = int(levels[j])
            if lvl == 0:
                continue
            for k in by_g.get(g, ()):
                if info[k][2] <= lvl <= info[k][3]:
                    m.z[k].set_value(int(m.z[k].value) + 1)
                    if k in rset:
                        m.n[k].set_value(int(m.n[k].value) + lvl)
                    break


# bytes per level variable of the Pyomo model (variables, constraint terms, the HiGHS copy)
PYOMO_BYTES_PER_LEVEL = 4096


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    t0 = time.perf_counter()
    cap, items = level_tables(state, opts)
    if all(len(lv) == 1 for _, lv, _ in items):  # nobody can run: all zero is the only choice
        return make_result(NAME, state, {}, opts, "optimal", build_s=time.perf_counter() - t0)
    scale = max(float(np.max(np.abs(v))) for _, _, v in items) or 1.0
    n_levels = sum(len(lv) for _, lv, _ in items)
    check_memory(NAME, f"a Pyomo model of {n_levels:,} level variables", PYOMO_BYTES_PER_LEVEL * n_levels)
    m, keys, info, rset, groups = build_model(cap, items, scale)
    warm = bool(opts.extra.get("warm_start", True))
    if warm:  # MIP start: the dp solution of the same levels and values (see the module docstring)
        lvs = [it[1] for it in items]
        try:
            chosen, _ = solve_levels(cap, lvs, [it[2] for it in items])
            set_start(m, keys, info, rset, items, groups, [int(lv[i]) for lv, i in zip(lvs, chosen)])
        except MemoryBudget:  # no start then: dp's table would not fit
            warm = False
    t1 = time.perf_counter()
    out = _pyomo.solve(m, opts.time_limit_s, opts.mip_gap, _pyomo.FAST_OPTIONS, warm_start=warm)
    t2 = time.perf_counter()
    if out.has_solution:
        counts = counts_from(m, keys, info, rset, items, groups)
        if is_feasible(state, counts, opts.pow2) and all(
                counts[t.id] in set(lv.tolist()) for t, lv, _ in items):
            return make_result(NAME, state, counts, opts, out.status, t1 - t0, t2 - t1, out.message)
        out.message = "solver values rounded to an infeasible count vector"
    return make_result(NAME, state, fallback_counts(state, opts), opts, "fallback", t1 - t0, t2 - t1,
                       out.message)
