"""`hull`: exact allocation for large instances (10,000 Trainers, 100,000 nodes), with a certificate.

The count-level problem (a multiple-choice knapsack, see dp.py) is solved without a
Trainers x nodes table:

1. Structure (hull_levels): each Trainer's value v_j(k) is affine between ~20 candidate levels,
   so a (Trainers x candidates) matrix describes every level.
2. LP bound: the upper concave hull of each row (from level 0, vectorized across rows), all
   hull segments with positive slope sorted by slope (ties: row, then segment), taken greedily
   until the pool is full. The critical slope is a Lagrangian price lam on nodes and

       UB = lam * |N| + sum_j max_k (v_j(k) - lam * k)

   is an upper bound on every count vector (weak duality; the max over a Trainer's levels is
   at a candidate because v_j - lam*k is affine between candidates).
3. Incumbent: every Trainer at the hull vertex the greedy left it on, then the leftover nodes
   along the first affine run after each vertex, best slope first.
4. Certificate: UB - value <= 1e-9 * max(1, |UB|)  =>  proven optimal.
5. Otherwise an exact repair (hull_repair): a level k of Trainer j can be part of a better
   vector only if its reduced-cost loss R_j - (v_j(k) - lam*k) is below the gap UB - value,
   so most Trainers keep one level; those with several contiguous levels on which v_j is
   concave merge into one item (sorted increments); the rest (the core) get a small DP over
   their deviation from the incumbent, identical Trainers folded into one step each
   (hull_groups). The result is then optimal over all levels (status optimal), or, if the core
   is too large for the budget, the best vector of a windowed DP is returned with its gap in
   `message` (status optimal-within-gap when the gap <= opts.mip_gap, else heuristic).

Ties are broken deterministically (sorts by slope, then row order; the DP takes the first
maximum). The reported objective is the sum of the chosen levels' values, computed with the
same arithmetic as base._levels_values, and `message` states how it was proven, the LP
bound and the gap between it and the value (positive gaps are closed by the repair's proof).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from planner.allocators import dp, hull_levels, hull_repair
from planner.allocators.base import AllocOptions, AllocResult, AllocState, held, level_value, make_result

NAME = "hull"
REL_TOL = 1e-9  # proven optimal when UB - value <= REL_TOL * max(1, |UB|)


def upper_hull(K: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Upper concave hull of every row from column 0, positive slopes only.

    Returns (S, TO): S[j, i] the slope of row j's i-th hull segment (-inf past its last one,
    made non-increasing along the row), TO[j, i] the candidate column it ends at. Collinear
    points: the farthest one ends the segment."""
    J, P = K.shape
    S = np.full((J, P), -np.inf)
    TO = np.zeros((J, P), dtype=np.int64)
    if P < 2 or J == 0:
        return S[:, :1], TO[:, :1]
    rows = np.arange(J)
    cur = np.zeros(J, dtype=np.int64)
    col = np.arange(P)[None, :]
    act = rows
    n = 0
    Kf = K.astype(float)
    for it in range(P - 1):
        cu = cur[act]
        kc = Kf[act, cu][:, None]
        vc = V[act, cu][:, None]
        later = (col > cu[:, None]) & np.isfinite(V[act])
        with np.errstate(invalid="ignore", divide="ignore"):
            sl = np.where(later, (V[act] - vc) / np.where(later, Kf[act] - kc, 1.0), -np.inf)
        far = P - 1 - np.argmax(sl[:, ::-1], axis=1)
        s = sl[np.arange(len(act)), far]
        go = s > 0
        act, far, s = act[go], far[go], s[go]
        if len(act) == 0:
            break
        S[act, it] = s
        TO[act, it] = far
        cur[act] = far
        n = it + 1
    S, TO = S[:, :max(n, 1)], TO[:, :max(n, 1)]
    np.minimum.accumulate(S, axis=1, out=S)
    return S, TO


def lp_greedy(L, S, TO):
    """The LP relaxation by the greedy over hull segments: (lam, base column per row, residual)."""
    J = L.K.shape[0]
    r, i = np.nonzero(S > 0)
    sl = S[r, i]
    width = L.K[r, TO[r, i]] - np.where(i > 0, L.K[r, TO[r, np.maximum(i - 1, 0)]], 0)
    order = np.lexsort((i, r, -sl))
    cum = np.cumsum(width[order])
    base = np.zeros(J, dtype=np.int64)
    if len(cum) == 0 or cum[-1] <= L.cap:
        q = len(order)
        lam = 0.0
        resid = L.cap - (int(cum[-1]) if len(cum) else 0)
    else:
        q = int(np.searchsorted(cum, L.cap, side="right"))
        lam = float(sl[order[q]])
        resid = L.cap - (int(cum[q - 1]) if q else 0)
    taken = order[:q]
    if len(taken):
        # segments of a row are taken in order (slopes non-increasing): the last one taken
        last = np.bincount(r[taken], minlength=J) - 1  # a row's taken segments are a prefix
        has = last >= 0
        base[has] = TO[has, last[has]]
    return lam, base, resid


def fill(L, base: np.ndarray, resid: int) -> np.ndarray:
    """Incumbent levels: the hull vertices, plus leftover nodes along the next affine run of
    each row, best (positive) slope first, rows in order on ties."""
    J, P = L.K.shape
    rows = np.arange(J)
    x = L.K[rows, base].copy()
    if resid <= 0 or P < 2:
        return x
    nxt = np.minimum(base + 1, P - 1)
    ok = (base < P - 1) & L.filled[rows, np.minimum(base, P - 2)]
    d = np.where(ok, L.K[rows, nxt] - x, 0)
    with np.errstate(invalid="ignore"):
        beta = np.where(ok, (L.V[rows, nxt] - L.V[rows, base]) / np.maximum(d, 1), -np.inf)
    cand = np.nonzero(beta > 0)[0]
    if len(cand) == 0:
        return x
    cand = cand[np.lexsort((cand, -beta[cand]))]
    before = np.concatenate(([0], np.cumsum(d[cand])[:-1]))
    x[cand] += np.clip(resid - before, 0, d[cand])
    return x


def bound(L, lam: float) -> tuple[float, np.ndarray]:
    """UB(lam) = lam*|N| + sum_j R_j and R_j = max_k v_j(k) - lam*k (per row)."""
    if L.K.shape[0] == 0:
        return 0.0, np.zeros(0)
    R = np.max(L.V - lam * np.where(L.K < hull_levels._SENT, L.K, 0), axis=1)
    return lam * L.cap + float(R.sum()), R


def solve(state: AllocState, opts: AllocOptions):
    """(Levels, counts per row, info dict) of the decision; see the module docstring."""
    t0 = time.perf_counter()
    L = hull_levels.build(state, opts)
    build_s = time.perf_counter() - t0
    S, TO = upper_hull(L.K, L.V)
    lam, base, resid = lp_greedy(L, S, TO)
    x = fill(L, base, resid)
    rows = np.arange(len(x))
    z = float(hull_levels.values(L, rows, x).sum()) if len(x) else 0.0
    ub, R = bound(L, lam)
    tol = REL_TOL * max(1.0, abs(ub))
    info = {"bound": ub, "lam": lam, "lp_value": z, "core": 0, "merged": 0, "proof": "bound",
            "build_s": build_s}
    if ub - z > tol:
        x, z, extra = hull_repair.repair(L, x, z, lam, R, ub, tol)
        info.update(extra)
    info["value"] = z
    info["gap"] = max(ub - z, 0.0)
    return L, x, info


def allocate(state: AllocState, opts: AllocOptions) -> AllocResult:
    if any(t.batches for t in state.trainers):
        # IBM's batch-size choices: the candidate levels above assume one curve per Trainer;
        # dp solves the same knapsack over the best batch size per level (base.batch_levels)
        res = dp.allocate(state, opts)
        return replace(res, allocator=NAME, message=f"batch-size choices: solved by dp; {res.message}".strip("; "))
    t0 = time.perf_counter()
    L, x, info = solve(state, opts)
    t1 = time.perf_counter()
    counts = {t.id: 0 for t in state.trainers}
    for t, k in zip(L.trainers, x.tolist()):
        counts[t.id] = k
    total = info["value"]
    if len(L.trainers) < len(state.trainers):  # over Pj_max: level 0
        pool = state.pool_set
        ids = {t.id for t in L.trainers}
        total += sum(level_value(t, 0, opts, held(t, pool)) for t in state.trainers if t.id not in ids)
    if info["proof"] in ("bound", "dp"):
        status = "optimal"
    elif info["gap"] <= opts.mip_gap * max(1.0, abs(info["bound"])):
        status = "optimal-within-gap"
    else:
        status = "heuristic"
    msg = (f"proof: {info['proof']} (core {info['core']} Trainers, {info['merged']} merged); "
           f"bound {info['bound']:.10g}, gap {info['gap']:.3g} to it")
    return make_result(NAME, state, counts, opts, status, build_s=info["build_s"],
                       solve_s=t1 - t0 - info["build_s"], message=msg, objective=total)
