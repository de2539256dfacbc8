"""The exact repair step of `hull` (planner.allocators.hull): reduced-cost fixing, then a DP.

With the Lagrangian price lam and R_j = max_k v_j(k) - lam*k, every count vector x satisfies

    value(x) = UB - sum_j loss_j(x_j) - lam * (|N| - sum_j x_j),   loss_j(k) = R_j - (v_j(k) - lam*k) >= 0

so a vector better than the incumbent (value z) has loss_j(x_j) < G = UB - z for every j. Levels
with a larger loss are dropped (on an affine run the loss is affine, so the survivors of a run
are an interval). Then:

- a Trainer with one surviving level keeps it (the incumbent's level always survives);
- Trainers whose survivors are one contiguous range on which v_j is concave are merged into
  one item: its best value for any number of extra nodes is the sum of their unit increments
  taken largest first (the sup-convolution of concave functions);
- the rest (the core) get an exact DP over capacity, F(c) = best value of the core with at
  most c nodes above their smallest survivors; the answer is max_c F(c) + merged(rest).

This is exact over all levels. If the core DP would exceed BUDGET cell updates the incumbent
is kept and the caller reports the gap.
"""

from __future__ import annotations

import numpy as np

from planner.allocators import hull_levels

BUDGET = 40_000_000  # core DP cell updates (levels x capacities) before giving up
PASSES = (1 / 16, 1 / 4, 1.0)  # pass i keeps levels with loss <= gap * PASSES[i]


def surviving_counts(L, Lm: np.ndarray, G: float) -> np.ndarray:
    """How many levels of each row have loss <= G (points plus affine-run interiors)."""
    valid = L.K < hull_levels._SENT
    pts = ((Lm <= G) & valid).sum(axis=1)
    if L.K.shape[1] < 2:
        return pts
    lp, lq = Lm[:, :-1], Lm[:, 1:]
    d = (L.K[:, 1:] - L.K[:, :-1]).astype(float)
    run = L.filled & (d >= 2)
    inner = np.zeros(lp.shape)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        left = np.floor((G - lp) * d / (lq - lp) + 1e-9)
        right = np.floor((G - lq) * d / (lp - lq) + 1e-9)
    a, b = lp <= G, lq <= G
    inner = np.where(a & b, d - 1, np.where(a, np.minimum(d - 1, left), np.where(b, np.minimum(d - 1, right), 0)))
    return pts + np.where(run, np.nan_to_num(inner), 0).sum(axis=1).astype(np.int64)


def row_pieces(L, j: int, lm: np.ndarray, G: float, xj: int) -> list[tuple[int, int, float, float]]:
    """Surviving levels of row j as affine pieces (a, b, v(a), slope), sorted, the incumbent's
    level xj included."""
    K, V, F = L.K[j], L.V[j], L.filled[j]
    n = int((K < hull_levels._SENT).sum())
    out = []
    for p in range(n):
        if lm[p] <= G:
            out.append((int(K[p]), int(K[p]), float(V[p]), 0.0))
        if p + 1 < n and F[p] and K[p + 1] - K[p] >= 2:
            d = int(K[p + 1] - K[p])
            lp, lq = float(lm[p]), float(lm[p + 1])
            t0, t1 = 1, d - 1
            if lp <= G and lq <= G:
                pass
            elif lp <= G:
                t1 = min(t1, int(np.floor((G - lp) * d / (lq - lp) + 1e-9)))
            elif lq <= G:
                t0 = max(t0, d - int(np.floor((G - lq) * d / (lp - lq) + 1e-9)))
            else:
                t0, t1 = 1, 0
            if t0 <= t1:
                beta = (float(V[p + 1]) - float(V[p])) / d
                out.append((int(K[p]) + t0, int(K[p]) + t1, float(V[p]) + beta * t0, beta))
    if not any(a <= xj <= b for a, b, _, _ in out):
        out.append((xj, xj, float(hull_levels.values(L, np.asarray([j]), np.asarray([xj]))[0]), 0.0))
    out.sort()
    return out


def increments(pieces) -> list[tuple[float, int]] | None:
    """(slope, width) unit increments of a row whose pieces cover one contiguous range with
    non-increasing slopes (v concave there); None otherwise."""
    inc = []
    for (a, b, va, be), nxt in zip(pieces, pieces[1:] + [None]):
        if b > a:
            inc.append((be, b - a))
        if nxt is not None:
            if nxt[0] != b + 1:
                return None
            inc.append((nxt[2] - (va + be * (b - a)), 1))
    for (s0, _), (s1, _) in zip(inc, inc[1:]):
        if s1 > s0 + 1e-12 * max(1.0, abs(s0)):
            return None
    return inc


def repair(L, x: np.ndarray, z: float, lam: float, R: np.ndarray, ub: float, tol: float):
    """Exact optimum given the incumbent x (value z) and the bound ub: (x, value, info).

    Up to three passes over the levels with loss <= T, T = gap/16, gap/4, gap (never more
    than ub - the best value so far): a pass is exact over every vector within T of ub, so it
    proves optimality as soon as the best vector known is within T; small T are cheap."""
    Km = np.where(L.K < hull_levels._SENT, L.K, 0)
    Lm = np.where(L.K < hull_levels._SENT, R[:, None] - (L.V - lam * Km), np.inf)
    rows = np.arange(len(x))
    inc_loss = R - (hull_levels.values(L, rows, x) - lam * x)
    G = ub - z + tol
    info = {}
    for share in PASSES:
        T = min(G * share, ub - z + tol)
        x1, z1, info = _repair_at(L, x, lam, R, Lm, T, inc_loss)
        if x1 is not None and z1 > z:
            x, z = x1, z1
            inc_loss = R - (hull_levels.values(L, rows, x) - lam * x)
        # the pass found the best vector among those within T of the bound: if the best
        # vector known is within T, nothing is better
        if x1 is not None and ub - z + tol <= T:
            info["proof"] = "dp"
            return x, z, info
    if info.get("proof") == "dp":  # (not reached: the last pass includes the best vector)
        info["proof"] = "none"
    return x, z, info


def _repair_at(L, x, lam, R, Lm, G: float, inc_loss):
    """The best vector whose levels and partial sums all have loss <= G (exact over every
    vector within G of the bound): (x, value, info), or (None, None, info)."""
    cnt = surviving_counts(L, Lm, G)
    multi = np.nonzero((cnt >= 2) | (inc_loss > G))[0]
    core, agg_rows, agg_inc, agg_base = [], [], [], []
    for j in multi.tolist():
        pcs = row_pieces(L, j, Lm[j], G, int(x[j]))
        inc = increments(pcs)
        if inc is None:
            core.append((j, int(x[j])) + _options(pcs, int(x[j])))
        else:
            agg_rows.append(j)
            agg_base.append(pcs[0][0])
            agg_inc.append(inc)
    info = {"core": len(core), "merged": len(agg_rows), "proof": "dp"}
    fixed = np.ones(len(x), dtype=bool)
    fixed[multi] = False
    inc_core = sum(c[1] for c in core)
    room = L.cap - int(x[fixed].sum()) - sum(agg_base) - inc_core  # for core deviations + merged
    hist = _core_dp(core, lam, R, G)
    if hist is None:
        info["proof"] = "none (core too large)"
        return None, None, info
    lo, F = hist[-1]
    gain, order_r, order_w = _merged(agg_rows, agg_inc)
    u = room - np.arange(lo, lo + len(F))  # nodes left for the merged item
    tot = np.where(u >= 0, F + gain[np.clip(u, 0, len(gain) - 1)], -np.inf)
    best = int(np.argmax(tot))
    if not np.isfinite(tot[best]):
        info["proof"] = "none (no feasible core state)"
        return None, None, info
    x = x.copy()
    for (j, *_), d in zip(core, _walk_back(hist, core, lo + best)):
        x[j] += d
    if agg_rows:
        x[agg_rows] = agg_base
        units = int(min(u[best], len(gain) - 1))
        before = np.concatenate(([0], np.cumsum(order_w)[:-1]))
        np.add.at(x, order_r, np.clip(units - before, 0, order_w))
    z2 = float(hull_levels.values(L, np.arange(len(x)), x).sum())
    return x, z2, info


def _options(pieces, inc: int):
    """Deviations (levels - inc) and values of every level in the pieces, ascending."""
    offs, vals = [], []
    for a, b, va, be in pieces:
        k = np.arange(a, b + 1)
        offs.append(k - inc)
        vals.append(va + be * (k - a))
    return np.concatenate(offs), np.concatenate(vals)


def _core_dp(core, lam: float, R: np.ndarray, G: float):
    """DP over the core's total deviation D from the incumbent: F(D) = best value of the rows so
    far. A state whose reduced-cost loss already exceeds G cannot lead to a better vector and
    is dropped, so the window of D stays small. Returns [(lo, F)] per stage (F[i] is D = lo + i),
    or None past BUDGET."""
    lo, F = 0, np.zeros(1)
    hist = [(lo, F)]
    r_sum = inc_sum = 0.0
    work = 0
    for j, inc, ds, vals in core:
        nlo = lo + int(ds[0])
        n_new = len(F) + int(ds[-1] - ds[0])
        work += len(ds) * n_new
        if work > BUDGET:
            return None
        # Fn[i] = max_o F[i - (ds[o] - ds[0])] + vals[o]: one gather over a -inf padded F
        pad = np.concatenate((np.full(n_new, -np.inf), F, np.full(n_new, -np.inf)))
        idx = n_new + np.arange(n_new)[None, :] - (ds - ds[0])[:, None]
        Fn = (pad[idx] + vals[:, None]).max(axis=0)
        r_sum += float(R[j])
        # loss so far = r_sum - value + lam * (incumbent levels + D); keep loss <= G
        inc_sum += inc
        thresh = r_sum + lam * (inc_sum + np.arange(nlo, nlo + len(Fn))) - G
        Fn[Fn < thresh] = -np.inf
        ok = np.nonzero(np.isfinite(Fn))[0]
        lo, F = nlo + int(ok[0]), Fn[ok[0]:ok[-1] + 1]
        hist.append((lo, F))
    return hist


def _walk_back(hist, core, D: int) -> list[int]:
    """The deviations chosen by the DP for total D (first maximum: the smallest level)."""
    out = [0] * len(core)
    for i in range(len(core) - 1, -1, -1):
        ds, vals = core[i][2], core[i][3]
        lo, F = hist[i]
        idx = D - ds - lo
        ok = (idx >= 0) & (idx < len(F))
        cand = np.where(ok, F[np.clip(idx, 0, len(F) - 1)] + vals, -np.inf)
        p = int(np.argmax(cand))
        out[i] = int(ds[p])
        D -= out[i]
    return out


def _merged(rows, incs):
    """The merged item: gain[u] = best value of u extra nodes (positive increments, largest first,
    ties by row then position), and the sorted increments' rows and widths."""
    if not rows:
        return np.zeros(1), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    r = np.concatenate([np.full(len(inc), j) for j, inc in zip(rows, incs)])
    pos = np.concatenate([np.arange(len(inc)) for inc in incs])
    s = np.concatenate([np.asarray([i[0] for i in inc], dtype=float) for inc in incs])
    w = np.concatenate([np.asarray([i[1] for i in inc], dtype=np.int64) for inc in incs])
    keep = s > 0
    r, pos, s, w = r[keep], pos[keep], s[keep], w[keep]
    order = np.lexsort((pos, r, -s))
    r, s, w = r[order], s[order], w[order]
    total = int(w.sum())
    per = np.repeat(s, w) if total else np.zeros(0)
    gain = np.concatenate(([0.0], np.cumsum(per)))
    return gain, r, w
