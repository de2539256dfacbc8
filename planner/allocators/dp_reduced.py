"""Lagrangian reduction of the count-level knapsack, then `dp` on what survives (for `auto`).

`dp` (dp.solve_levels) fills a table of every Trainer's levels x every capacity. Most of those
cells cannot be part of an optimum, and a price on nodes says which. With a price lam >= 0 and
R_j = max_k v_j(k) - lam*k, every count vector x with sum x_j <= |N| satisfies

    value(x) = UB - sum_j loss_j(x_j) - lam * (|N| - sum_j x_j),
    UB = lam*|N| + sum_j R_j,   loss_j(k) = R_j - (v_j(k) - lam*k) >= 0

(weak duality, as in hull.py), so a vector worth more than UB - T has loss_j(x_j) < T for
every j. The steps:

1. Price: the LP relaxation by the greedy over the upper concave hulls of the Trainers' value
   curves (hull segments taken by slope until the pool is full); lam is the slope of the first
   segment that does not fit. Each Trainer's hull is cached with its level table.
2. Incumbent: every Trainer at the hull vertex the greedy left it on, the one cut segment's
   Trainer given the nodes left over if that level exists; value z, gap G = UB - z.
3. Passes: keep the levels with loss <= T (plus a rounding tolerance); a Trainer left with one
   level is fixed, the others go to dp.solve_levels shifted by their smallest kept level. The
   best vector of that reduced problem is optimal over all vectors within T of UB, so it is the
   optimum as soon as its value is >= UB - T. The first pass uses T = G / FIRST_PASS (cheap, and
   usually enough: G overstates the true gap); if it does not prove, the second uses T = UB minus
   the best value found, which keeps every better vector, so it is exact.

If a pass would cost more cells than half of dp's on the whole problem, the whole problem goes
to dp. A proof by a pass is exact (every better vector survives the reduction, with a rounding
tolerance of REL_TOL x scale on the losses); a proof by the bound alone, like hull's, says the
incumbent is within REL_TOL x scale of the optimum. Ties may be broken differently from dp
(dp's rules applied to the reduced problem, or the incumbent). Level lists are ascending and start
at 0 (as base.level_tables makes them); levels above `cap` are dropped.
"""

from __future__ import annotations

import weakref

import numpy as np

from planner.allocators import dp
from planner.allocators.base import AllocOptions, AllocResult, AllocState

NAME = "dp-reduced"
FIRST_PASS = 16        # the first pass keeps levels with loss <= gap / FIRST_PASS
REL_TOL = 1e-9         # proven when UB - value <= REL_TOL * max(1, |UB|, max |v|) (hull: x max(1, |UB|))
# id(values) -> (weak reference to values, hull). The level tables are cached read-only arrays
# (base._levels_values); an entry goes when its table does (the weak reference's callback), so
# this cache never holds more than the level tables' cache, and never keeps a table alive.
_HULLS: dict[int, tuple] = {}
_HULLS_MAX = 16384  # a backstop: cleared when full


def value_hull(levels: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Upper concave hull of the points (levels[i], values[i]) from i = 0, rising segments only.

    Returns (vertex indices into levels, slope of each segment, width of each segment in nodes);
    slopes strictly decrease; collinear points: the farthest one ends the segment."""
    key = id(values)
    hit = _HULLS.get(key)
    if hit is not None and hit[0]() is values:
        return hit[1]
    L, V = levels.tolist(), values.tolist()
    h = [0]
    for q in range(1, len(L)):  # Andrew's monotone chain, upper side
        while len(h) >= 2 and (V[h[-1]] - V[h[-2]]) * (L[q] - L[h[-2]]) <= (V[q] - V[h[-2]]) * (L[h[-1]] - L[h[-2]]):
            h.pop()
        h.append(q)
    slopes, widths = [], []
    for a, b in zip(h, h[1:]):
        s = (V[b] - V[a]) / (L[b] - L[a])
        if not s > 0:
            break
        slopes.append(s)
        widths.append(L[b] - L[a])
    out = (np.asarray(h[:len(slopes) + 1], dtype=np.int64), np.asarray(slopes, dtype=float),
           np.asarray(widths, dtype=np.int64))
    if len(_HULLS) >= _HULLS_MAX:
        _HULLS.clear()
    _HULLS[key] = (weakref.ref(values, lambda _, key=key: _HULLS.pop(key, None)), out)
    return out


def _price(cap: int, levels: list[np.ndarray], values: list[np.ndarray]):
    """(lam, incumbent level index per item) from the LP greedy over the hulls."""
    J = len(levels)
    hulls = [value_hull(lv, v) for lv, v in zip(levels, values)]
    vidx = [h[0] for h in hulls]
    nseg = [len(h[1]) for h in hulls]
    pos = [0] * J
    lam = 0.0
    if sum(nseg):
        S = np.concatenate([h[1] for h in hulls])
        order = np.argsort(-S, kind="stable")  # ties: item order, then segment order
        own = np.repeat(np.arange(J), nseg)[order]
        cum = np.cumsum(np.concatenate([h[2] for h in hulls])[order])
        q = int(np.searchsorted(cum, cap, side="right"))  # segments that fit whole
        taken = np.bincount(own[:q], minlength=J).tolist()  # a prefix of each item's segments
        pos = [int(vidx[j][taken[j]]) for j in range(J)]
        if q < len(order):
            lam = float(S[order[q]])
            crit = int(own[q])
            extra = cap - (int(cum[q - 1]) if q else 0)
            lv = levels[crit]
            want = int(lv[pos[crit]]) + extra
            i = int(np.searchsorted(lv, want))
            if i < len(lv) and lv[i] == want and values[crit][i] > values[crit][pos[crit]]:
                pos[crit] = i
    return lam, pos


def solve_levels(cap: int, levels: list[np.ndarray], values: list[np.ndarray]) -> tuple[list[int], float, dict]:
    """Optimal level index per item (as dp.solve_levels), the optimum, and how it was found:
    info = {"bound", "passes", "kept" (levels left in the last pass), "proof": "bound" / "reduced" /
    "dp"}."""
    J = len(levels)
    if J == 0:
        return [], 0.0, {"bound": 0.0, "passes": 0, "kept": 0, "proof": "bound"}
    K = np.concatenate(levels)
    if K.max() > cap:  # levels above the pool: drop them (a prefix of each list stays)
        cut = [int(np.searchsorted(lv, cap, side="right")) for lv in levels]
        levels = [lv[:c] for lv, c in zip(levels, cut)]
        values = [v[:c] for v, c in zip(values, cut)]
        K = np.concatenate(levels)
    V = np.concatenate(values)
    lam, pos = _price(cap, levels, values)
    n = [len(lv) for lv in levels]
    off = np.zeros(J, dtype=np.int64)
    np.cumsum(n[:-1], out=off[1:])
    red = V - lam * K
    R = np.maximum.reduceat(red, off)
    ub = lam * cap + float(R.sum())
    best_pos = pos
    best = float(V[off + np.asarray(pos)].sum())
    tol = REL_TOL * max(1.0, abs(ub), float(np.abs(V).max()))
    info = {"bound": ub, "passes": 0, "kept": J, "proof": "bound"}
    if ub - best <= tol:
        return best_pos, best, info
    loss = np.repeat(R, n) - red
    full_cells = _cells(cap, n)
    T = (ub - best) / FIRST_PASS
    exact = False
    while True:
        info["passes"] += 1
        keep = loss <= T + tol
        cnt = np.add.reduceat(keep, off)
        kidx = np.flatnonzero(keep)
        start = np.zeros(J + 1, dtype=np.int64)
        np.cumsum(cnt, out=start[1:])
        first = kidx[start[:-1]]  # each item's smallest kept level (its best one always stays)
        low = K[first]
        c2 = cap - int(low.sum())
        info["kept"] = len(kidx)
        multi = np.flatnonzero(cnt > 1)
        if _cells(c2, cnt[multi].tolist()) > full_cells / 2 or (exact and c2 < 0):
            # (an exact pass keeps the incumbent, so c2 >= 0 there; dp is the safe answer if not)
            chosen, opt = dp.solve_levels(cap, levels, values)
            info["proof"] = "dp"
            return chosen, opt, info
        if c2 >= 0:
            # the reduced items: each one's kept levels minus its smallest, as views of two flat arrays
            sk = K[kidx] - np.repeat(low, cnt)
            sv = V[kidx]
            st = start.tolist()
            multi = multi.tolist()
            chosen, _ = dp.solve_levels(c2, [sk[st[j]:st[j + 1]] for j in multi], [sv[st[j]:st[j + 1]] for j in multi])
            p = (first - off).tolist()
            for j, i in zip(multi, chosen):
                p[j] = int(kidx[st[j] + i] - off[j])
            val = float(V[off + np.asarray(p)].sum())
            if val > best:
                best, best_pos = val, p
            if best >= ub - T - tol:
                info["proof"] = "reduced"
                return best_pos, best, info
        T = ub - best  # every better vector survives: the next pass is exact
        exact = True


def _cells(cap: int, sizes: list[int]) -> int:
    """An estimate of dp.solve_levels' work: levels x min(cap, levels) (as auto.dp_cells)."""
    total = sum(sizes)
    return total * min(max(cap, 0), total)


def solve(cap: int, levels: list[np.ndarray], values: list[np.ndarray]) -> tuple[list[int], float, str]:
    """solve_levels with its info as one line (dp.allocate's `solver`)."""
    chosen, opt, info = solve_levels(cap, levels, values)
    how = {"bound": "the bound alone", "reduced": "dp on the reduced problem", "dp": "dp on the whole problem"}
    return chosen, opt, (f"Lagrangian reduction: {info['passes']} pass(es), {info['kept']} of "
                         f"{sum(len(lv) for lv in levels)} levels kept, proven by {how[info['proof']]}; "
                         f"bound {info['bound']:.10g}")


def allocate(state: AllocState, opts: AllocOptions, name: str = NAME) -> AllocResult:
    """dp.allocate with the reduction: the same optimum, reported under `name`."""
    return dp.allocate(state, opts, name=name, solver=solve)
